//! The `ferrodyn` binary: a thin command line over the server, engine and
//! storage crates. `ferrodyn serve` opens storage, loads the engine and serves
//! the DynamoDB API until SIGINT or SIGTERM, then flushes and exits.

mod serve;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "ferrodyn", version, about = "A DynamoDB-compatible database", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the DynamoDB-compatible server.
    Serve(serve::ServeArgs),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(args) => serve::run(args),
    };
    if let Err(message) = result {
        eprintln!("ferrodyn: {message}");
        std::process::exit(1);
    }
}
