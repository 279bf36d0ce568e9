//go:build tools

// Package tools pins zbctl (built from this module's client version by run.sh) in go.mod.
package tools

import _ "github.com/camunda/zeebe/clients/go/v8/cmd/zbctl"
