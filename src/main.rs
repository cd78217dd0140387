// Temporary entry point until the CLI lands.
use clap::Parser;

#[derive(clap::Parser)]
struct Cli {
    #[command(flatten)]
    g: filestore::cli::globals::GlobalArgs,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Subcommand)]
enum Cmd {
    Serve(filestore::cli::serve::ServeArgs),
    Admin(filestore::cli::admin::AdminArgs),
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Serve(a) => filestore::cli::serve::run(a, &cli.g).await,
        Cmd::Admin(a) => filestore::cli::admin::run(a, &cli.g),
    }
}
