//! `zest cluster`: a local cluster in one command. Each node is a child process started as
//! `zest start --node-id i ...` on 127.0.0.1 (so any node can be killed and started again by
//! hand with the command line this prints), node i with gRPC on 26500 + 10i, REST on
//! 8080 + 10i, management on 9600 + 10i, the internal port on 26502 + 10i and its data in
//! `<data-dir>/node-i`. The nodes share a cluster secret (the internal port admits only
//! members): `ZEST_CLUSTER_SECRET` when set, else one made at the first run and kept in
//! `<data-dir>/cluster-secret` (readable by its owner only). The nodes stop when this command gets Ctrl-C or SIGTERM, and also when
//! it is killed (they watch its pid).

use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use anyhow::Context;

#[derive(clap::Args, Debug)]
pub struct ClusterArgs {
    /// Nodes to run
    #[arg(long, default_value_t = 3)]
    pub nodes: u32,
    /// Partitions of the cluster
    #[arg(long, default_value_t = 3)]
    pub partitions: u32,
    /// Nodes that replicate each partition
    #[arg(long, default_value_t = 3)]
    pub replication_factor: u32,
    /// Where the nodes keep their data (node i in <data-dir>/node-i)
    #[arg(long, default_value = "data")]
    pub data_dir: PathBuf,
    /// Added to every port (to run two clusters side by side)
    #[arg(long, default_value_t = 0)]
    pub port_offset: u16,
    /// More flags for every node's `zest start`, after `--`
    #[arg(last = true)]
    pub start_flags: Vec<String>,
}

/// Node i's command line.
fn node_args(a: &ClusterArgs, i: u32) -> Vec<String> {
    let port = |base: u32| (base + 10 * i + u32::from(a.port_offset)).to_string();
    let internal = |j: u32| format!("127.0.0.1:{}", 26502 + 10 * j + u32::from(a.port_offset));
    let contact_points: Vec<String> = (0..a.nodes).filter(|&j| j != i).map(internal).collect();
    let mut args = vec![
        "start".to_string(),
        format!("--node-id={i}"),
        format!("--cluster-size={}", a.nodes),
        format!("--partitions={}", a.partitions),
        format!("--replication-factor={}", a.replication_factor),
        format!("--internal-address={}", internal(i)),
        format!("--gateway-address=127.0.0.1:{}", port(26500)),
        format!("--rest-address=127.0.0.1:{}", port(8080)),
        format!("--management-address=127.0.0.1:{}", port(9600)),
        format!(
            "--data-dir={}",
            a.data_dir.join(format!("node-{i}")).display()
        ),
    ];
    if !contact_points.is_empty() {
        args.push(format!("--contact-points={}", contact_points.join(",")));
    }
    args.extend(a.start_flags.iter().cloned());
    args
}

/// The cluster's secret: the environment's, or the one kept in the data directory (made from
/// the system's random source at the first run), and how the printed command lines name it.
fn secret(data_dir: &std::path::Path) -> anyhow::Result<(String, String)> {
    if let Ok(s) = std::env::var("ZEST_CLUSTER_SECRET") {
        return Ok((s, String::new()));
    }
    let path = data_dir.join("cluster-secret");
    let shown = format!("ZEST_CLUSTER_SECRET=$(cat {}) ", path.display());
    if let Ok(s) = std::fs::read_to_string(&path) {
        return Ok((s.trim().to_string(), shown));
    }
    use std::io::{Read, Write};
    use std::os::unix::fs::OpenOptionsExt;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("reading /dev/urandom for the cluster secret")?;
    let s: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    std::fs::create_dir_all(data_dir)
        .with_context(|| format!("creating {}", data_dir.display()))?;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .and_then(|mut f| f.write_all(s.as_bytes()))
        .with_context(|| format!("writing {}", path.display()))?;
    Ok((s, shown))
}

pub async fn run(a: ClusterArgs) -> anyhow::Result<()> {
    anyhow::ensure!(a.nodes >= 1, "--nodes must be at least 1");
    anyhow::ensure!(
        (1..=a.nodes).contains(&a.replication_factor),
        "--replication-factor must be 1 to --nodes ({})",
        a.nodes
    );
    let exe = std::env::current_exe().context("finding the zest binary")?;
    let (secret, shown) = secret(&a.data_dir)?;
    let mut children: Vec<Child> = Vec::new();
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel::<(u32, String)>(64);
    for i in 0..a.nodes {
        let args = node_args(&a, i);
        println!("node {i}: {shown}{} {}", exe.display(), args.join(" "));
        let mut child = Command::new(&exe)
            .args(&args)
            .env("ZEST_CLUSTER_SECRET", &secret)
            .arg(format!("--parent-pid={}", std::process::id()))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting node {i}"))?;
        let stdout = child.stdout.take().context("the node's output")?;
        let tx = ready_tx.clone();
        let pid = child.id();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.blocking_send((i, format!("node {i} (pid {pid}): {line}")));
            }
        });
        children.push(child);
    }
    drop(ready_tx);
    let mut ready = 0;
    loop {
        tokio::select! {
            line = ready_rx.recv() => match line {
                Some((_, line)) => {
                    println!("{line}");
                    if line.contains(": READY ") {
                        ready += 1;
                        if ready == a.nodes {
                            println!("CLUSTER READY nodes={} partitions={} replication-factor={}", a.nodes, a.partitions, a.replication_factor);
                        }
                    }
                }
                None => break,
            },
            _ = crate::stop_signal() => break,
        }
    }
    for child in &children {
        terminate(child.id());
    }
    for (i, mut child) in children.into_iter().enumerate() {
        match child.wait() {
            Ok(status) => println!("node {i} stopped: {status}"),
            Err(e) => println!("node {i}: {e}"),
        }
    }
    Ok(())
}

fn terminate(pid: u32) {
    #[cfg(unix)]
    {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .status();
    }
    #[cfg(not(unix))]
    let _ = pid;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_i_gets_ports_ten_apart_and_the_others_as_contact_points() {
        let a = ClusterArgs {
            nodes: 3,
            partitions: 3,
            replication_factor: 3,
            data_dir: PathBuf::from("d"),
            port_offset: 0,
            start_flags: vec!["--memory-mb=64".into()],
        };
        let args = node_args(&a, 1);
        for expected in [
            "--node-id=1",
            "--cluster-size=3",
            "--internal-address=127.0.0.1:26512",
            "--gateway-address=127.0.0.1:26510",
            "--rest-address=127.0.0.1:8090",
            "--management-address=127.0.0.1:9610",
            "--data-dir=d/node-1",
            "--contact-points=127.0.0.1:26502,127.0.0.1:26522",
            "--memory-mb=64",
        ] {
            assert!(
                args.contains(&expected.to_string()),
                "{expected} in {args:?}"
            );
        }
    }
}
