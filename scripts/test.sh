#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit and behaviour tests of every crate, then the
# black-box compatibility suites (official Go client, zbctl, pyzeebe, Node SDK, Java over gRPC and
# REST, Camunda's Spring Boot starter, Camunda Process Test) and the crash test
# against a release build of `zest`. Installs what the compatibility suites need by itself.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUST_BACKTRACE=${RUST_BACKTRACE:-0}

step() { printf '\n==== %s\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "cargo test (unit, behaviour and storage tests)"
cargo test --workspace --locked

step "the engine's benchmark runs once (its instance completes; timings: cargo bench)"
cargo test -p zest-engine --bench realistic --locked

step "cargo build --release -p zest"
cargo build --release --locked -p zest

step "compatibility suites and crash test against target/release/zest"
ZEST_BIN="$PWD/target/release/zest" tests/compat/run.sh
