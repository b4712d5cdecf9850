//! `plasma-demo`: zero-copy CUDA -> OpenGL plasma. Run with `--help` for the flags.

use anyhow::Result;
use clap::Parser as _;
use plasma_demo::cli::{self, Cli, Command, Plan};
use plasma_demo::{Output, gpu_health, headless, one_line, reference, watchdog, window};
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
    // A benchmark on a GPU that needs a reset would hang or mislead: say so before it starts.
    if cli.command.is_none() && cli.run.bench {
        gpu_health::print_warnings("plasma-demo");
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
        None => {
            let display_named = cli::display_named(|name| std::env::var_os(name));
            match cli.run.plan(display_named) {
                Plan::Headless => headless::run(&cli.run, &out)?,
                // A headless server: the first command of the README still shows something.
                Plan::NoDisplay => headless::run_fallback(
                    &cli.run,
                    &out,
                    "no display (DISPLAY and WAYLAND_DISPLAY are unset)",
                )?,
                Plan::Window { fallback } => {
                    match window::GlWindow::open(cli.run.size, cli.run.vsync) {
                        Ok(win) => window::run(win, &cli.run, &out)?,
                        Err(e) if fallback => {
                            headless::run_fallback(&cli.run, &out, &one_line(&e))?
                        }
                        Err(e) => {
                            return Err(e.context(
                                "the flags ask for a window (--windowed, --vsync); run with \
                                 --headless where there is no display",
                            ));
                        }
                    }
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
