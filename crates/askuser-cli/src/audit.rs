//! `askuser audit`: the store's audit log, exported as JSON lines and verified. See
//! `askuser audit --help` and docs/audit.md.
//!
//! Exit status: 0 done (verify: the chain holds), 1 the store failed or the log does not check
//! out (verify names the first line changed, removed or reordered), 2 bad usage.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use askuser_core::Timestamp;
use askuser_store::SharedStore;

use crate::cli::{self, Args, Command};

const USAGE: &str = "\
usage: askuser audit export [--store URL] [--schema NAME] [--since TIME]
       askuser audit verify FILE [--partial]

The audit log: every event of every question in the store (asked, posted, reminded, escalated,
answered or denied, declined, expired, withdrawn, late), hash-chained; never a secret's value.

  export     writes the log as JSON lines to stdout, oldest first. --store: sqlite:PATH or
             postgres://… (default: ASKUSER_STORE, else askuser serve's default store);
             --schema: the PostgreSQL schema; --since TIME (RFC 3339): only events from then on
  verify     checks a log FILE (`-`: stdin): every line's hash, and that each follows the one
             before. Exit 0 with how many events it verified, or 1 naming the first line that was
             changed, removed or reordered. A log exported --since starts later: --partial
             takes its first line as given

See docs/audit.md.
";

const AUDIT: Command = Command::new("askuser audit", USAGE);

/// How many entries one read of the store takes.
const PAGE: usize = 1000;

enum Failure {
    Usage(String),
    Failed(String),
}

impl From<askuser_store::StoreError> for Failure {
    fn from(error: askuser_store::StoreError) -> Self {
        Self::Failed(askuser_tool::exit::with_causes(&error))
    }
}

/// `askuser audit ARGS`.
pub(crate) fn main(args: &[String]) -> ExitCode {
    if cli::wants_help(args) {
        return AUDIT.help();
    }
    let mut args = Args::new(args);
    let outcome = match args.next().as_deref() {
        Some("export") => export(args),
        Some("verify") => verify(args),
        Some(other) => Err(Failure::Usage(format!("unknown command {other:?}: export or verify"))),
        None => Err(Failure::Usage("a command is required: export or verify".to_owned())),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(message)) => AUDIT.usage_error(&message),
        Err(Failure::Failed(message)) => {
            eprintln!("askuser audit: {message}");
            ExitCode::from(1)
        }
    }
}

fn verify(mut args: Args) -> Result<(), Failure> {
    let partial = args.take_flag("--partial");
    let rest = args.rest();
    let [file] = rest.as_slice() else {
        return Err(Failure::Usage("verify takes one FILE (or - for stdin)".to_owned()));
    };
    let text = if file == "-" {
        std::io::read_to_string(std::io::stdin())
            .map_err(|e| Failure::Failed(format!("reading stdin: {e}")))?
    } else {
        std::fs::read_to_string(file).map_err(|e| Failure::Failed(format!("cannot read {file}: {e}")))?
    };
    match askuser_store::verify(&text, partial) {
        Ok(verified) => {
            let from =
                if verified.first == 1 { String::new() } else { format!(" (from seq {})", verified.first) };
            println!("verified {} events{from}: the chain holds", verified.events);
            Ok(())
        }
        Err(broken) => Err(Failure::Failed(format!("{file}: {broken}"))),
    }
}

fn export(mut args: Args) -> Result<(), Failure> {
    let store = args.take_option("--store").map_err(Failure::Usage)?;
    let schema = args.take_option("--schema").map_err(Failure::Usage)?;
    let since = match args.take_option("--since").map_err(Failure::Usage)? {
        None => None,
        Some(text) => Some(text.parse::<Timestamp>().map_err(|_| {
            Failure::Usage(format!("--since takes a time in RFC 3339 (2026-12-07T21:00:00Z), got {text:?}"))
        })?),
    };
    if let Some(extra) = args.rest().first() {
        return Err(Failure::Usage(format!("unexpected argument {extra:?}")));
    }
    let url = if let Some(url) = store.or_else(|| std::env::var("ASKUSER_STORE").ok()) {
        url
    } else {
        let dir = askuser_client::default_data_dir()
            .ok_or_else(|| Failure::Usage("no home directory: pass --store".to_owned()))?;
        let path = dir.join("pending.db");
        if !path.exists() {
            return Err(Failure::Failed(format!(
                "no store at {} (askuser serve's default): pass --store",
                path.display()
            )));
        }
        format!("sqlite:{}", path.display())
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Failed(format!("cannot start the runtime: {e}")))?;
    runtime.block_on(async {
        let store: Arc<dyn SharedStore> = match schema {
            Some(schema) => {
                Arc::new(askuser_store::PostgresStore::builder(&url).schema(schema).open().await?)
            }
            None => askuser_store::open(&url).await?,
        };
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        let mut after = 0;
        loop {
            let entries = store.audit_entries(after, since, PAGE).await?;
            for entry in &entries {
                writeln!(out, "{}", entry.line).map_err(|e| Failure::Failed(format!("writing: {e}")))?;
            }
            match entries.last() {
                Some(last) if entries.len() == PAGE => after = last.seq,
                _ => break,
            }
        }
        out.flush().map_err(|e| Failure::Failed(format!("writing: {e}")))
    })
}
