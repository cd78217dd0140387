//! Reading a secret at the terminal with echo off (`login` without
//! `--api-key`). The terminal's settings come back when the answer is read,
//! and also when the command is interrupted (Ctrl-C) while it waits.

use crate::client::ClientError;
use rustix::termios::{self, LocalModes, OptionalActions, Termios};
use std::io::{BufRead, Write};
use std::os::fd::{AsFd, OwnedFd};

/// Echo is off on the terminal of `fd` until this is dropped.
struct EchoOff {
    fd: OwnedFd,
    saved: Termios,
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        let _ = termios::tcsetattr(&self.fd, OptionalActions::Now, &self.saved);
    }
}

fn terminal_error(e: rustix::io::Errno) -> ClientError {
    ClientError::io("setting the terminal", std::io::Error::from(e))
}

/// Turns echo off on standard input's terminal (a typed line still ends
/// with a newline on the screen).
fn echo_off() -> Result<EchoOff, ClientError> {
    let fd = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| ClientError::io("setting the terminal", e))?;
    let saved = termios::tcgetattr(&fd).map_err(terminal_error)?;
    let mut quiet = saved.clone();
    quiet.local_modes.remove(LocalModes::ECHO);
    quiet.local_modes.insert(LocalModes::ECHONL);
    termios::tcsetattr(&fd, OptionalActions::Now, &quiet).map_err(terminal_error)?;
    Ok(EchoOff { fd, saved })
}

/// Asks `question` on stderr and reads one line from the terminal without
/// showing it; gives the line trimmed.
pub(crate) async fn hidden(question: &str) -> Result<String, ClientError> {
    let guard = echo_off()?;
    let mut err = std::io::stderr();
    let _ = write!(err, "{question}");
    let _ = err.flush();
    // On a thread of its own: Ctrl-C (the command's select) can end the
    // wait, dropping the guard, which puts echo back.
    let line = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).map(|_| line)
    })
    .await
    .map_err(|e| ClientError::Io(format!("reading the answer: {e}")))?
    .map_err(|e| ClientError::io("reading the answer", e))?;
    drop(guard);
    Ok(line.trim().to_string())
}
