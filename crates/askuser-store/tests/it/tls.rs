//! PostgreSQL over TLS (rustls): a cluster of the test's own that accepts only TLS connections,
//! with a certificate signed by a CA the test makes, reached with `sslmode=require` and
//! `verify-full` (managed PostgreSQL services require one of them).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use askuser_store::{NewQuestion, PendingStore, PostgresStore, State};

use crate::support::{answer_large, request};

const PG_BIN: &str = "/usr/lib/postgresql/15/bin";

/// A cluster in a temporary directory on a free port, run by `postgres`, TLS only; stopped and
/// removed when dropped.
struct TlsCluster {
    dir: PathBuf,
    port: u16,
}

impl TlsCluster {
    /// `None`, saying `SKIPPED`, without `initdb`, the `postgres` user or `openssl` (a failure
    /// under `CI=true`).
    fn start() -> Option<Self> {
        let usable = Path::new(PG_BIN).join("initdb").exists()
            && Command::new("id").arg("postgres").output().is_ok_and(|o| o.status.success())
            && Command::new("openssl").arg("version").output().is_ok_and(|o| o.status.success());
        if !usable {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI must provide initdb, postgres and openssl"
            );
            eprintln!("SKIPPED tls::*: no {PG_BIN}/initdb, no postgres user or no openssl");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = std::env::temp_dir().join(format!("askuser-store-tls-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let cluster = Self { dir, port };
        cluster.certificates();
        run(Command::new("chown").args(["-R", "postgres:postgres"]).arg(&cluster.dir));
        cluster.as_postgres("initdb", &["-D", "data", "--auth=trust", "--username=root", "--no-sync"]);
        // TCP only with TLS; plain connections are refused by pg_hba.conf.
        std::fs::write(
            cluster.dir.join("data/pg_hba.conf"),
            "local all all trust\nhostssl all all 127.0.0.0/8 trust\n",
        )
        .unwrap();
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1,127.0.0.2 -k {dir} -c fsync=off -c ssl=on \
             -c ssl_cert_file={dir}/server.crt -c ssl_key_file={dir}/server.key",
            cluster.port,
            dir = cluster.dir.display()
        );
        let log = cluster.dir.join("log");
        cluster.as_postgres(
            "pg_ctl",
            &["-D", "data", "-o", &options, "-l", log.to_str().unwrap(), "-w", "start"],
        );
        Some(cluster)
    }

    /// A CA, and a server certificate for `localhost` and 127.0.0.1 signed by it.
    fn certificates(&self) {
        let openssl = |args: &[&str]| run(Command::new("openssl").args(args).current_dir(&self.dir));
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
        openssl(
            &[
                &["req", "-x509"],
                &ec[..],
                &["-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=askuser test CA"],
            ]
            .concat(),
        );
        openssl(
            &[&["req"], &ec[..], &["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"]]
                .concat(),
        );
        std::fs::write(self.dir.join("san.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n").unwrap();
        openssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "san.ext",
        ]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(self.dir.join("server.key"), std::fs::Permissions::from_mode(0o600))
                .unwrap();
        }
    }

    fn url(&self, host: &str, query: &str) -> String {
        format!("postgres://root@{host}:{}/postgres?{query}", self.port)
    }

    fn as_postgres(&self, program: &str, args: &[&str]) -> Output {
        run(Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(Path::new(PG_BIN).join(program))
            .args(args)
            .current_dir(&self.dir))
    }
}

impl Drop for TlsCluster {
    fn drop(&mut self) {
        let _ = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(Path::new(PG_BIN).join("pg_ctl"))
            .args(["-D", "data", "-m", "immediate", "stop"])
            .current_dir(&self.dir)
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn run(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    assert!(output.status.success(), "{command:?}: {output:?}");
    output
}

/// The error and every cause, as one line.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    text
}

/// A store opened over TLS works (asks, answers, the listener wakes a watcher), and its
/// connections really are encrypted; `verify-full` checks the certificate against the CA given
/// and refuses one it cannot trust; a plain connection is refused by the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_over_tls() {
    let Some(cluster) = TlsCluster::start() else { return };
    let ca = cluster.dir.join("ca.crt");
    let trusted = format!("sslmode=verify-full&sslrootcert={}", ca.display());
    for (host, query) in [("127.0.0.1", "sslmode=require".to_owned()), ("localhost", trusted.clone())] {
        let url = cluster.url(host, &query);
        let store = PostgresStore::open(&url).await.unwrap_or_else(|e| panic!("{url}: {}", chain(&e)));
        let encrypted: bool = sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            .fetch_one(store.pool())
            .await
            .unwrap();
        assert!(encrypted, "{url}");
        let id = format!("tls-{host}");
        store.put(NewQuestion::new(request(&id), Duration::from_mins(1))).await.unwrap();
        let watcher = tokio::spawn({
            let store = store.clone();
            let id = id.clone();
            async move { store.watch(&id).await }
        });
        store.commit_answer(&id, &answer_large()).await.unwrap();
        let woken = tokio::time::timeout(Duration::from_secs(10), watcher).await.unwrap().unwrap().unwrap();
        assert_eq!(woken.state(), State::Answered);
        store.close().await;
    }

    // verify-full with the public roots only: the test CA is not among them.
    let untrusted = cluster.url("localhost", "sslmode=verify-full");
    let error = PostgresStore::open(&untrusted).await.expect_err("an untrusted certificate is refused");
    let said = chain(&error);
    eprintln!("untrusted: {said}");
    assert!(said.to_lowercase().contains("certificate"), "{said}");
    // verify-full checks the name too: the certificate is not for 127.0.0.2.
    let wrong_name = format!("postgres://root@127.0.0.2:{}/postgres?{trusted}", cluster.port);
    let error =
        PostgresStore::open(&wrong_name).await.expect_err("a certificate for another name is refused");
    assert!(chain(&error).to_lowercase().contains("certificate"), "{}", chain(&error));
    // Without TLS the server refuses the connection.
    let plain = cluster.url("127.0.0.1", "sslmode=disable");
    let error = PostgresStore::open(&plain).await.expect_err("no TLS, no connection");
    assert!(chain(&error).contains("no encryption"), "{}", chain(&error));
}
