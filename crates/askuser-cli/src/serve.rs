//! `askuser serve`: the answer server. `serve/mcp.rs` is what it mounts at `/mcp`.

mod mcp;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use askuser_client::{ApiToken, TOKEN_ENV};
use askuser_core::Profile;
use askuser_server::{AnswerServer, AnswerServerBuilder, Notifier, NotifyFormat};
use askuser_store::{PendingStore, PostgresStore, SharedStore, StoreError};
use askuser_tool::exit::with_causes;

use crate::cli::{self, Args, Command};

const USAGE: &str = "\
usage: askuser serve [options]

Runs the answer server: a person answers pending questions on its pages (from a phone or any
browser); agents ask over its JSON API (/v1) with the API token.

  --store URL           sqlite:PATH (default: pending.db in the user's data directory) or
                        postgres://USER@HOST/DB (several servers on one database act as one)
  --bind ADDR           the address to listen on (default: 127.0.0.1:8765; loopback only)
  --public-url URL      the URL people open, used in page links (default: http://ADDR)
  --token-file PATH     the API token; created (mode 0600) with a fresh token when missing
                        (default: `token` beside the SQLite store, or in the data directory).
                        Without --token-file, ASKUSER_TOKEN is used when set.
  --default-timeout S   how long a question waits when the asker gives no timeout (default 3600)
  --lease S             a question whose asker stopped waiting (killed, or gone) is withdrawn
                        about S seconds after its last wait ended (default 30)
  --keep-days N         delete a question N days after it was answered, declined, timed out
                        or withdrawn (default 30; `never` keeps every question); waiting ones never
  --late-days N         a question that timed out still takes an answer for N days (default 7;
                        0: never), kept as late for its asker; approvals are never late
  --profile NAME        reference (default: multiple choice) or extended (also text and
                        secret questions, declared defaults, timeout_seconds; docs/contract.md §10)
  --notify-url URL      POST a notice to URL when a question is asked, at its reminder time,
                        and when it is answered, declined, expired or withdrawn (id, session,
                        who asks, headers, page link; retried, never holding up an ask)
  --notify-format F     json (default) or ntfy (point --notify-url at your ntfy topic: the
                        follow-up replaces and clears the notification; one-tap answer buttons)
  --notify-questions    include the questions' text in notices (default: headers only)
  --escalate-after DUR  the reminder ladder's last step: a question still waiting DUR after it
                        was asked (10m, 2h) is also sent to --escalate-url (another ntfy topic,
                        another person's webhook) as an escalated notice; its follow-up goes
                        there too once it is settled anywhere
  --escalate-url URL    where escalated questions go; --escalate-format json (default) or ntfy
  --notify-credentials-file PATH
                        the webhook's credentials: an access token (Bearer) or user:password
                        (Basic); without it, ASKUSER_NOTIFY_CREDENTIALS is used when set
  --config PATH         the chat channels (Telegram, Slack) to ask through as well: a TOML file,
                        see docs/channels.md and docs/serve.example.toml; their tokens come from
                        files only you can read, or environment variables. Default:
                        ~/.config/askuser/serve.toml ($XDG_CONFIG_HOME/askuser/serve.toml) when
                        it exists
  --header-timeout S    the time a client has to send a request head; an idle kept-alive
                        connection closes after it too (default 10)
  --body-timeout S      the time a client has to send a request body (default 30)
  --max-connections N   the most connections open at once (default: 4096, or the descriptor
                        limit less 64); at the cap the oldest one not being answered is closed
  --mcp-background      MCP at /mcp also offers ask_user_question_later and get_user_answers
                        (background asks: a ticket at once, the answers later)

MCP: /mcp serves ask_user_question over Streamable HTTP (MCP clients add the URL
PUBLIC_URL/mcp with the header `Authorization: Bearer TOKEN`). Its questions go into this
server's store (the pages, notices) and, when the client shows forms, into its form too: the
first answer wins. Requests from browsers of other origins, and Host names other than loopback
and the public URL's, are refused (DNS rebinding).

Stops on Ctrl-C or SIGTERM: waits in progress are told the server is shutting down, answers in
flight are committed. Logs (one line per request, never a question's content) go to stderr.
";

/// How long `serve` keeps a settled question by default.
const DEFAULT_KEEP: Duration = Duration::from_hours(24 * 30);

/// The longest `--keep-days` (a hundred years; `never` keeps every question).
const MAX_KEEP_DAYS: u64 = 36_500;

#[derive(Debug)]
struct Options {
    store: Option<String>,
    bind: SocketAddr,
    public_url: Option<String>,
    token_file: Option<PathBuf>,
    default_timeout: Option<Duration>,
    lease: Option<Duration>,
    keep: Option<Duration>,
    late: Duration,
    notify_url: Option<String>,
    notify_format: NotifyFormat,
    escalate_after: Option<Duration>,
    escalate_url: Option<String>,
    escalate_format: NotifyFormat,
    notify_questions: bool,
    notify_credentials_file: Option<PathBuf>,
    config: Option<PathBuf>,
    profile: Profile,
    limits: askuser_server::ConnectionLimits,
    mcp_background: bool,
}

/// Where the webhook's credentials come from: a file, else the environment; never the command
/// line, where other users' `ps` would see them.
const NOTIFY_CREDENTIALS_ENV: &str = "ASKUSER_NOTIFY_CREDENTIALS";

/// The webhook's credentials and where they were read, if any were given. The file is checked as
/// the token file is: a link, another user's file or one others may read is refused.
fn notify_credentials(file: Option<&Path>) -> Result<Option<(String, String)>, String> {
    if let Some(path) = file {
        let text = askuser_client::read_private_file(path)
            .map_err(|e| format!("--notify-credentials-file {e}"))?
            .ok_or_else(|| format!("--notify-credentials-file {}: no such file", path.display()))?;
        return Ok(Some((text, format!("--notify-credentials-file {}", path.display()))));
    }
    Ok(std::env::var(NOTIFY_CREDENTIALS_ENV).ok().map(|text| (text, NOTIFY_CREDENTIALS_ENV.to_owned())))
}

/// `--bind`'s value: `IP:PORT`, or `HOST:PORT` with a name that resolves (`localhost:8765`; its
/// first address, IPv4 first).
fn bind_address(text: &str) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs as _;
    if let Ok(address) = text.parse() {
        return Ok(address);
    }
    let addresses: Vec<SocketAddr> = text
        .to_socket_addrs()
        .map_err(|e| {
            format!("--bind: not an address (IP:PORT or HOST:PORT, e.g. 127.0.0.1:8765): {text:?}: {e}")
        })?
        .collect();
    addresses
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| addresses.first())
        .copied()
        .ok_or_else(|| format!("--bind: {text:?} resolves to no address"))
}

/// Where `serve` looks for its config when `--config` is not given:
/// `$XDG_CONFIG_HOME/askuser/serve.toml`, else `~/.config/askuser/serve.toml`.
fn default_config() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let base = var("XDG_CONFIG_HOME").or_else(|| var("HOME").map(|home| home.join(".config")))?;
    Some(base.join("askuser/serve.toml"))
}

/// Listens on `bind`; an address in use says whether an askuser serve holds it.
async fn listen(bind: SocketAddr) -> Result<tokio::net::TcpListener, String> {
    match tokio::net::TcpListener::bind(bind).await {
        Ok(listener) => Ok(listener),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            let who = if is_askuser_serve(bind).await {
                "an askuser serve is already running there (stop it, or give another --bind)"
            } else {
                "another program listens there; give another --bind, e.g. 127.0.0.1:0 for any free port"
            };
            Err(format!("cannot listen on {bind}: the address is in use: {who}"))
        }
        Err(e) => Err(format!("cannot listen on {bind}: {e}")),
    }
}

/// Whether what listens at `address` is an askuser serve: its `/openapi.json` names askuser.
async fn is_askuser_serve(address: SocketAddr) -> bool {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let probe = async {
        let mut stream = tokio::net::TcpStream::connect(address).await.ok()?;
        stream.write_all(b"GET /openapi.json HTTP/1.0\r\nHost: localhost\r\n\r\n").await.ok()?;
        let mut head = Vec::new();
        stream.take(64 * 1024).read_to_end(&mut head).await.ok()?;
        Some(String::from_utf8_lossy(&head).contains("\"askuser"))
    };
    tokio::time::timeout(std::time::Duration::from_secs(2), probe).await.ok().flatten().unwrap_or(false)
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        store: None,
        bind: SocketAddr::from(([127, 0, 0, 1], 8765)),
        public_url: None,
        token_file: None,
        default_timeout: None,
        lease: None,
        keep: Some(DEFAULT_KEEP),
        late: askuser_server::DEFAULT_LATE_WINDOW,
        notify_url: None,
        notify_format: NotifyFormat::Json,
        escalate_after: None,
        escalate_url: None,
        escalate_format: NotifyFormat::Json,
        notify_questions: false,
        notify_credentials_file: None,
        config: None,
        profile: Profile::Reference,
        limits: askuser_server::ConnectionLimits::default(),
        mcp_background: false,
    };
    let args: Vec<String> = Args::new(args).collect();
    let mut args = args.iter().map(String::as_str);
    while let Some(arg) = args.next() {
        let mut value = |what: &str| args.next().ok_or_else(|| format!("{arg} needs {what}"));
        match arg {
            "--store" => options.store = Some(value("a store URL")?.to_owned()),
            "--bind" => {
                let text = value("an address such as 127.0.0.1:8765")?;
                options.bind = bind_address(text)?;
            }
            "--public-url" => {
                let url = value("a URL")?;
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(format!("--public-url must start with http:// or https://, got {url:?}"));
                }
                // It goes into every link, notice and chat message (issue 36.12): a control
                // character (CR LF) would split a header or a line, and credentials would be
                // handed to everyone who gets a link.
                if url.chars().any(char::is_control) || url.contains(' ') {
                    return Err("--public-url must not contain spaces or control characters".to_owned());
                }
                let authority =
                    url.split_once("://").map_or("", |(_, rest)| rest).split(['/', '?', '#']).next();
                if authority.is_some_and(|a| a.contains('@')) {
                    return Err("--public-url must not carry credentials (user:password@): every page link would hand them out".to_owned());
                }
                options.public_url = Some(url.to_owned());
            }
            "--token-file" => options.token_file = Some(PathBuf::from(value("a path")?)),
            "--default-timeout" => options.default_timeout = Some(cli::seconds(arg, value("seconds")?)?),
            "--lease" => options.lease = Some(cli::seconds(arg, value("seconds")?)?),
            "--keep-days" => options.keep = keep_days(value("a number of days, or never")?)?,
            "--late-days" => options.late = late_days(value("a number of days")?)?,
            "--notify-url" => options.notify_url = Some(http_url(arg, value("a URL")?)?),
            "--notify-format" => options.notify_format = notify_format(arg, value("json or ntfy")?)?,
            "--escalate-after" => options.escalate_after = Some(cli::seconds(arg, value("a duration")?)?),
            "--escalate-url" => options.escalate_url = Some(http_url(arg, value("a URL")?)?),
            "--escalate-format" => options.escalate_format = notify_format(arg, value("json or ntfy")?)?,
            "--notify-questions" => options.notify_questions = true,
            "--notify-credentials-file" => {
                options.notify_credentials_file = Some(PathBuf::from(value("a path")?));
            }
            "--config" => options.config = Some(PathBuf::from(value("a path")?)),
            "--header-timeout" => {
                options.limits = options.limits.with_header_timeout(cli::seconds(arg, value("seconds")?)?);
            }
            "--body-timeout" => {
                options.limits = options.limits.with_body_timeout(cli::seconds(arg, value("seconds")?)?);
            }
            "--max-connections" => {
                let text = value("a number of connections")?;
                let max =
                    text.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
                        format!("--max-connections takes a whole number above 0, got {text:?}")
                    })?;
                options.limits = options.limits.with_max_connections(max);
            }
            "--profile" => options.profile = cli::profile("--profile", value("reference or extended")?)?,
            "--mcp-background" => options.mcp_background = true,
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    if options.escalate_after.is_some() != options.escalate_url.is_some() {
        return Err("--escalate-after and --escalate-url go together".to_owned());
    }
    if options.keep.is_some_and(|keep| options.late > keep) {
        return Err(
            "--late-days is longer than --keep-days: a question would be deleted while it still takes a late answer"
                .to_owned(),
        );
    }
    Ok(options)
}

pub(crate) fn main(args: &[String]) -> ExitCode {
    let options =
        match Command::new("askuser serve", USAGE).options(args, |words| parse(&words.collect::<Vec<_>>())) {
            Ok(options) => options,
            Err(status) => return status,
        };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            say!("askuser serve: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            say!("askuser serve: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `builder` with the notices of `--notify-url` and the escalation of `--escalate-after`.
fn with_notices(mut builder: AnswerServerBuilder, options: &Options) -> Result<AnswerServerBuilder, String> {
    if let Some(url) = &options.notify_url {
        let mut notifier = Notifier::new(url, options.notify_format)
            .map_err(|e| format!("--notify-url: {e}"))?
            .include_questions(options.notify_questions);
        if let Some((credentials, place)) = notify_credentials(options.notify_credentials_file.as_deref())? {
            notifier = notifier.credentials(&credentials).map_err(|e| format!("{place}: {e}"))?;
        }
        builder = builder.notifier(notifier);
        say!("askuser serve: notifying {} of questions", askuser_store::redact_url(url));
    }
    if let (Some(after), Some(url)) = (options.escalate_after, &options.escalate_url) {
        let notifier = Notifier::new(url, options.escalate_format)
            .map_err(|e| format!("--escalate-url: {e}"))?
            .include_questions(options.notify_questions);
        builder = builder.escalate(after, notifier);
        say!(
            "askuser serve: escalating to {} the questions still waiting {} s after they were asked",
            askuser_store::redact_url(url),
            after.as_secs()
        );
    }
    Ok(builder)
}

/// An `http://` or `https://` URL given to `option`.
fn http_url(option: &str, url: &str) -> Result<String, String> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(url.to_owned())
    } else {
        Err(format!("{option} must start with http:// or https://, got {url:?}"))
    }
}

/// A notice format given to `option`: `json` or `ntfy`.
fn notify_format(option: &str, text: &str) -> Result<NotifyFormat, String> {
    match text {
        "json" => Ok(NotifyFormat::Json),
        "ntfy" => Ok(NotifyFormat::Ntfy),
        other => Err(format!("{option} takes json or ntfy, got {other:?}")),
    }
}

/// `--keep-days TEXT`: how long a settled question is kept (`None`: for ever).
fn keep_days(text: &str) -> Result<Option<Duration>, String> {
    // 0 would delete an answer within a minute, perhaps before its asker read it (and
    // `askuser pending purge --keep-days 0` deletes every settled question).
    if text == "0" {
        return Err("--keep-days 0 would delete answers before their askers may have read them: give 1 or more, or `never` to keep every question".to_owned());
    }
    if text == "never" {
        return Ok(None);
    }
    let days: u64 = text.parse().ok().filter(|&days| days <= MAX_KEEP_DAYS).ok_or_else(|| {
        format!("--keep-days takes a whole number of days up to {MAX_KEEP_DAYS}, or never, got {text:?}")
    })?;
    Ok(Some(Duration::from_hours(24 * days)))
}

/// `--late-days TEXT`: how long after its deadline a question still takes a late answer.
fn late_days(text: &str) -> Result<Duration, String> {
    #[expect(clippy::cast_precision_loss, reason = "a hundred years of days is exact in an f64")]
    let most = MAX_KEEP_DAYS as f64;
    let days: f64 = text.parse().ok().filter(|d: &f64| (0.0..=most).contains(d)).ok_or_else(|| {
        format!(
            "--late-days takes a number of days from 0 (no late answers) to {MAX_KEEP_DAYS}, got {text:?}"
        )
    })?;
    Ok(Duration::from_secs_f64(days * 86_400.0))
}

/// The file of a `sqlite:` store URL.
fn sqlite_path(url: &str) -> Option<&Path> {
    url.strip_prefix("sqlite:").map(|p| Path::new(p.strip_prefix("//").unwrap_or(p)))
}

/// Creates the directory of a SQLite store's file when missing (SQLite creates only the file).
fn prepare_sqlite(url: &str, path: &Path) -> Result<(), String> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.exists() => {
            std::fs::create_dir_all(dir).map_err(|e| {
                format!("cannot open the store {url}: cannot create the directory {}: {e}", dir.display())
            })
        }
        _ => Ok(()),
    }
}

/// Why the store at `url` did not open: the URL (without its password), what failed and every
/// cause (the database's own words: connection refused, authentication failed, …). SQLite says
/// only "unable to open database file": the file's own error says why (permission denied, a
/// directory in the way).
fn open_failed(url: &str, error: &StoreError) -> String {
    let text = format!("cannot open the store {}: {}", askuser_store::redact_url(url), with_causes(error));
    if let Some(path) = sqlite_path(url)
        && let Err(why) =
            std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)
    {
        return format!("{text} ({}: {why})", path.display());
    }
    text
}

/// The store URL and the default token file beside it.
fn store_and_token_file(options: &Options) -> Result<(String, Option<PathBuf>), String> {
    let data_dir = askuser_client::default_data_dir();
    let store = if let Some(url) = &options.store {
        url.clone()
    } else {
        let dir = data_dir.clone().ok_or("no home directory to keep the store in: pass --store")?;
        private_dir(&dir)?;
        format!("sqlite:{}", dir.join("pending.db").display())
    };
    let beside = store
        .strip_prefix("sqlite:")
        .map(|p| PathBuf::from(p.strip_prefix("//").unwrap_or(p)))
        .map(|db| db.with_file_name("token"))
        .or_else(|| data_dir.map(|d| d.join("token")));
    Ok((store, beside))
}

/// Creates the data directory mode 0700, or makes an existing one 0700 (saying so): it holds the
/// store and the token.
fn private_dir(dir: &std::path::Path) -> Result<(), String> {
    if !dir.exists() {
        // Made private from the start: nothing to report about a folder of our own making.
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode =
            std::fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?.permissions().mode();
        if mode & 0o077 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| format!("cannot make {} private (mode 0700): {e}", dir.display()))?;
            say!(
                "askuser serve: {} was open to other users (mode {:04o}): made 0700",
                dir.display(),
                mode & 0o777
            );
        }
    }
    Ok(())
}

/// The channels' config: `--config PATH`, else the default place when a file is there.
fn read_config(options: &Options) -> Result<Option<askuser_channels::ChannelsConfig>, String> {
    let config = options.config.clone().or_else(|| {
        let default = default_config()?;
        default.is_file().then(|| {
            say!(
                "askuser serve: config {} (the default place; --config PATH for another)",
                default.display()
            );
            default
        })
    });
    config
        .map(|path| askuser_channels::ChannelsConfig::from_file(&path).map_err(|e| e.to_string()))
        .transpose()
}

async fn run(options: Options) -> Result<(), String> {
    init_log();
    // Read first: a mistake in it stops the server before anything opens.
    let channels_config = read_config(&options)?;
    let (store_url, default_token_file) = store_and_token_file(&options)?;
    // `token_flag`: what `ask --server` needs to find the same token (nothing for the file it
    // reads by default).
    let (token, token_place, token_flag) = match (&options.token_file, std::env::var_os(TOKEN_ENV)) {
        (None, Some(text)) => {
            let text = text.into_string().map_err(|_| format!("{TOKEN_ENV} is not valid UTF-8"))?;
            (
                ApiToken::new(&text).map_err(|e| format!("{TOKEN_ENV}: {e}"))?,
                format!("the {TOKEN_ENV} variable"),
                // `ask` reads the same variable.
                String::new(),
            )
        }
        (path, _) => {
            let path = path
                .clone()
                .or(default_token_file)
                .ok_or("no place for the token file: pass --token-file")?;
            let (token, created) = ApiToken::load_or_create(&path).map_err(|e| e.to_string())?;
            let place = format!("{}{}", path.display(), if created { " (created)" } else { "" });
            let read_by_default = askuser_client::default_token_file().is_some_and(|file| file == path);
            let flag =
                if read_by_default { String::new() } else { format!(" --token-file {}", path.display()) };
            (token, place, flag)
        }
    };
    // On PostgreSQL the server is one replica of a fleet: it also talks to the others.
    let fleet = if store_url.starts_with("postgres://") || store_url.starts_with("postgresql://") {
        Some(PostgresStore::open(&store_url).await.map_err(|e| open_failed(&store_url, &e))?)
    } else {
        None
    };
    let store: std::sync::Arc<dyn SharedStore> = if let Some(postgres) = &fleet {
        std::sync::Arc::new(postgres.clone())
    } else {
        if let Some(path) = sqlite_path(&store_url) {
            prepare_sqlite(&store_url, path)?;
        }
        askuser_store::open(&store_url).await.map_err(|e| open_failed(&store_url, &e))?
    };
    let listener = listen(options.bind).await?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    let public_url = options.public_url.clone().unwrap_or_else(|| format!("http://{local}"));
    let mut builder = AnswerServer::builder(std::sync::Arc::clone(&store), token)
        .public_url(public_url.as_str())
        .profile(options.profile)
        .connection_limits(options.limits);
    if let Some(postgres) = &fleet {
        builder = builder.fleet(postgres);
    }
    if let Some(lease) = options.lease {
        builder = builder.lease(lease);
    }
    builder = builder.late_window(options.late);
    if let Some(keep) = options.keep {
        builder = builder.keep(keep);
    }
    if let Some(timeout) = options.default_timeout {
        builder = builder.default_timeout(timeout);
    }
    builder = with_notices(builder, &options)?;
    let stop_mcp = tokio_util::sync::CancellationToken::new();
    let server =
        builder.mount_with_token("/mcp", mcp_router(&options, &store, &public_url, &stop_mcp)).build();
    say!("askuser serve: listening on {public_url}");
    crate::qr::show(&public_url);
    say!("askuser serve: store {}", askuser_store::redact_url(&store_url));
    say!("askuser serve: profile {}", options.profile);
    say!("askuser serve: API token in {token_place}");
    say!(
        "askuser serve: ask with `askuser ask --server {public_url}{token_flag} FILE` (FILE: a tool call's \
         arguments, e.g. examples/calls/first.json in the askuser repository)"
    );
    if !local.ip().is_loopback() && options.public_url.is_none() {
        say!(
            "askuser serve: listening beyond loopback: put it behind HTTPS and pass --public-url with the address people open"
        );
    }
    say!("askuser serve: MCP (Streamable HTTP) at {public_url}/mcp, with the API token");
    let channels = start_channels(channels_config.as_ref(), &store, &server, options.public_url.is_some())?;
    let result = server.serve(listener, shutdown_signal_ending(stop_mcp)).await;
    if let Some(channels) = channels {
        channels.stop().await;
    }
    result.map_err(|e| format!("serving failed: {e}"))?;
    say!("askuser serve: stopped");
    Ok(())
}

/// The log on stderr: one line per request. A line that cannot be written (a closed pipe, a full
/// disk, a terminal gone) is dropped.
fn init_log() {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    // rmcp (MCP at /mcp) logs sessions, their ids and clients' details at INFO: the log keeps
    // one line per request, and a session id is a client's to present, not the log's.
    let quiet_rmcp = tracing_subscriber::filter::Targets::new()
        .with_default(tracing::Level::INFO)
        .with_target("rmcp", tracing::Level::WARN)
        // PostgreSQL's NOTICEs ("relation already exists, skipping") are no news to the operator.
        .with_target("sqlx::postgres::notice", tracing::Level::WARN);
    // Not even a word about a line it could not write: that word would be written with
    // `eprintln!`, which panics on the same closed pipe, and fail the request being logged.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .log_internal_errors(false)
        .with_target(false)
        .finish()
        .with(quiet_rmcp)
        .init();
}

/// MCP at `/mcp`: its questions in `store`, waiting as long as the server's.
fn mcp_router(
    options: &Options,
    store: &std::sync::Arc<dyn SharedStore>,
    public_url: &str,
    stop: &tokio_util::sync::CancellationToken,
) -> axum::Router {
    mcp::router(mcp::Settings {
        store: std::sync::Arc::clone(store) as std::sync::Arc<dyn PendingStore>,
        profile: options.profile,
        timeout: options.default_timeout.unwrap_or(askuser_client::DEFAULT_TIMEOUT),
        background: options.mcp_background,
        public_url,
        body_limit: askuser_server::DEFAULT_BODY_LIMIT,
        stop: stop.clone(),
    })
}

/// Starts the chat channels of `--config`, if given. Page links only where people can open them
/// (`--public-url`): a batch a chat cannot take (a secret question) links there.
fn start_channels(
    config: Option<&askuser_channels::ChannelsConfig>,
    store: &std::sync::Arc<dyn SharedStore>,
    server: &AnswerServer,
    public: bool,
) -> Result<Option<askuser_channels::Channels>, String> {
    let Some(config) = config else { return Ok(None) };
    let links: Option<askuser_channels::PageLinks> = public.then(|| {
        let server = server.clone();
        std::sync::Arc::new(move |id: &str| server.page_url(id)) as askuser_channels::PageLinks
    });
    let channels =
        askuser_channels::Channels::start(config, store, links.as_ref()).map_err(|e| e.to_string())?;
    say!("askuser serve: asking through {}", config.names().join(" and "));
    Ok(Some(channels))
}

/// [`shutdown_signal`], then ends the MCP sessions and their streams with the server.
async fn shutdown_signal_ending(mcp: tokio_util::sync::CancellationToken) {
    shutdown_signal().await;
    mcp.cancel();
}

/// Resolves on Ctrl-C (SIGINT), SIGTERM or SIGHUP.
async fn shutdown_signal() {
    let signal = cli::first_signal().await;
    say!("askuser serve: shutting down ({})", signal.name);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_takes_a_host_name() {
        assert_eq!(bind_address("localhost:8770").unwrap().port(), 8770);
        assert!(bind_address("localhost:8770").unwrap().ip().is_loopback());
        assert_eq!(bind_address("[::1]:1").unwrap(), "[::1]:1".parse().unwrap());
        assert!(bind_address("nowhere.invalid:1").unwrap_err().starts_with("--bind: not an address"));
        assert!(bind_address("8770").is_err());
    }

    use askuser_testkit::args;

    #[test]
    fn parses_options() {
        let o =
            parse(&args(&["--store=sqlite:/tmp/x.db", "--bind", "127.0.0.1:0", "--token-file", "/tmp/t"]))
                .unwrap();
        assert_eq!(o.store.as_deref(), Some("sqlite:/tmp/x.db"));
        assert_eq!(o.bind.port(), 0);
        assert_eq!(o.token_file, Some(PathBuf::from("/tmp/t")));
        let (store, token) = store_and_token_file(&o).unwrap();
        assert_eq!((store.as_str(), token), ("sqlite:/tmp/x.db", Some(PathBuf::from("/tmp/token"))));
        assert!(parse(&args(&["--bind", "nowhere"])).unwrap_err().contains("nowhere"));
        assert!(parse(&args(&["--public-url", "ftp://x"])).unwrap_err().contains("http"));
        // Issue 36.12: CR LF and credentials in the URL every link carries.
        assert!(
            parse(&args(&["--public-url", "https://a.example\r\nX: y"])).unwrap_err().contains("control")
        );
        assert!(
            parse(&args(&["--public-url", "https://me:pw@a.example/"])).unwrap_err().contains("credentials")
        );
        assert!(parse(&args(&["--public-url", "https://a.example/x@y"])).is_ok(), "an @ in the path is fine");
        assert_eq!(parse(&args(&["--profile", "extended"])).unwrap().profile, Profile::Extended);
        assert_eq!(parse(&args(&[])).unwrap().keep, Some(Duration::from_hours(24 * 30)));
        assert_eq!(parse(&args(&["--keep-days", "7"])).unwrap().keep, Some(Duration::from_hours(24 * 7)));
        assert_eq!(parse(&args(&["--keep-days=never"])).unwrap().keep, None);
        assert!(parse(&args(&["--keep-days", "0"])).unwrap_err().contains("`never` to keep every question"));
        assert!(
            parse(&args(&["--keep-days", "-1"])).unwrap_err().contains("--keep-days takes a whole number")
        );
        assert!(parse(&args(&["--keep-days", "99999"])).unwrap_err().contains("36500"));
        assert_eq!(parse(&args(&[])).unwrap().late, Duration::from_hours(24 * 7));
        assert_eq!(parse(&args(&["--late-days", "0.5"])).unwrap().late, Duration::from_hours(12));
        assert_eq!(parse(&args(&["--late-days", "0"])).unwrap().late, Duration::ZERO);
        assert!(parse(&args(&["--late-days", "-1"])).unwrap_err().contains("from 0 (no late answers)"));
        assert!(
            parse(&args(&["--late-days", "9", "--keep-days", "8"]))
                .unwrap_err()
                .contains("longer than --keep-days")
        );
        assert_eq!(parse(&args(&["--profile", "standard"])).unwrap().profile, Profile::Reference);
        assert!(parse(&args(&["--profile", "fancy"])).unwrap_err().contains("extended"));
        assert!(parse(&args(&["--colour"])).unwrap_err().contains("--colour"));
        let limits = parse(&args(&["--header-timeout", "2", "--body-timeout=3", "--max-connections", "40"]))
            .unwrap()
            .limits;
        assert_eq!(
            (limits.header_timeout, limits.body_timeout, limits.max_connections),
            (Duration::from_secs(2), Duration::from_secs(3), 40)
        );
        assert!(parse(&args(&["--max-connections", "0"])).unwrap_err().contains("above 0"));
        assert_eq!(
            parse(&args(&["--config", "serve.toml"])).unwrap().config,
            Some(PathBuf::from("serve.toml"))
        );
    }

    /// The credentials file is held to the token file's rules.
    #[cfg(unix)]
    #[test]
    fn notify_credentials_come_from_a_private_file_only() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("askuser-serve-credentials-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("credentials");
        std::fs::write(&path, "phil:pw\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let refused = notify_credentials(Some(&path)).unwrap_err();
        assert!(
            refused.starts_with(&format!("--notify-credentials-file {}: its mode is 0644", path.display())),
            "{refused}"
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let (text, from) = notify_credentials(Some(&path)).unwrap().unwrap();
        assert_eq!(
            (text.as_str(), from),
            ("phil:pw\n", format!("--notify-credentials-file {}", path.display()))
        );
        let missing = notify_credentials(Some(&dir.join("none"))).unwrap_err();
        assert!(missing.ends_with("none: no such file"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
