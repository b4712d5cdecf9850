//! `plasma-demo`: zero-copy CUDA -> OpenGL plasma. Run with `--help` for the flags.

use anyhow::Result;
use clap::Parser as _;
use plasma_demo::cli::{Cli, Command, Display};
use plasma_demo::{Output, headless, one_line, reference, watchdog, window};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    plasma_demo::init_logging();
    // The subcommands use no GPU.
    if cli.command.is_none()
        && let Err(message) = watchdog::arm("plasma-demo", cli.run.watchdog_secs)
    {
        eprintln!("plasma-demo: error: {message}");
        return ExitCode::from(2);
    }
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("plasma-demo: error: {}", one_line(&error));
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let out = Output::new(cli.run.json);
    match cli.command {
        Some(Command::Reference(args)) => reference::write_reference(&args)?,
        // `compare` exits like cmp(1): 0 within tolerance, 1 different, 2 on an error.
        Some(Command::Compare(args)) => {
            return Ok(match reference::compare_files(&args) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::from(1),
                Err(error) => {
                    eprintln!("plasma-demo: error: {}", one_line(&error));
                    ExitCode::from(2)
                }
            });
        }
        None => match cli.run.display() {
            Display::Window => window::run(&cli.run, &out)?,
            Display::Headless => headless::run(&cli.run, &out)?,
        },
    }
    Ok(ExitCode::SUCCESS)
}
