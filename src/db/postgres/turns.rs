//! One turn per account on this node for the statements that wait on its
//! row: a commit with an idempotency key (or one by one after a batch
//! failed), a resumable upload's creation and commit, a delete. A request
//! of an account whose row another of its requests on this node holds or
//! waits for waits here, in memory, holding no pooled connection. So one
//! account holds at most one of the node's connections on its row, and a
//! burst of such requests (a public key's resumable creations, say) cannot
//! take the pool from every other account. The row's lock made them go one
//! at a time anyway: the turn moves their queue out of the pool; it does
//! not lengthen it. The batched commits need none: one statement per
//! account (`batch`), or per node (`bus`), is in flight at a time.

use super::DbError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::OwnedMutexGuard;
use tokio::time::Instant;

/// The accounts whose turn is taken or waited for on this node.
#[derive(Default)]
pub(super) struct Turns {
    accounts: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// An account's turn, until dropped.
pub(super) struct Turn<'a> {
    turns: &'a Turns,
    account: String,
    held: Option<OwnedMutexGuard<()>>,
}

impl Turns {
    /// `account`'s turn, once the requests before it are done; a 503 when
    /// that takes past `deadline` (the call's, whose statements then have
    /// what is left of it; `limit` names its length in the error).
    pub(super) async fn take(
        &self,
        account: &str,
        deadline: Instant,
        limit: Duration,
    ) -> Result<Turn<'_>, DbError> {
        let lock = {
            let mut accounts = self.accounts.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(accounts.entry(account.to_string()).or_default())
        };
        // Made before the wait: a request that gives up waiting forgets an
        // account no one else holds or waits for.
        let mut turn = Turn {
            turns: self,
            account: account.to_string(),
            held: None,
        };
        match tokio::time::timeout_at(deadline, lock.lock_owned()).await {
            Ok(held) => {
                turn.held = Some(held);
                Ok(turn)
            }
            Err(_) => Err(DbError::timed_out(limit)),
        }
    }

    /// The accounts with a turn taken or waited for (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.accounts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl super::PgStore {
    /// `account`'s turn on this node, and the call's deadline, which the
    /// wait for it has used part of and its statements get the rest of.
    pub(super) async fn turn(&self, account: &str) -> Result<(Turn<'_>, Instant), DbError> {
        let deadline = Instant::now() + self.limit;
        let turn = self.turns.take(account, deadline, self.limit).await?;
        Ok((turn, deadline))
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut accounts = self
            .turns
            .accounts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.held = None;
        // Only the map holds it: no one else has or waits for the turn.
        if accounts
            .get(&self.account)
            .is_some_and(|lock| Arc::strong_count(lock) == 1)
        {
            accounts.remove(&self.account);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: Duration = Duration::from_secs(5);

    #[tokio::test(start_paused = true)]
    async fn an_accounts_turn_waits_for_its_own_not_for_anothers() {
        let turns = Arc::new(Turns::default());
        let first = turns
            .take("acc_a", Instant::now() + LIMIT, LIMIT)
            .await
            .unwrap();
        // Another account's turn is at once.
        let other = turns
            .take("acc_b", Instant::now() + LIMIT, LIMIT)
            .await
            .unwrap();
        drop(other);
        let waiting = {
            let turns = Arc::clone(&turns);
            tokio::spawn(async move {
                let _turn = turns
                    .take("acc_a", Instant::now() + LIMIT, LIMIT)
                    .await
                    .unwrap();
                Instant::now()
            })
        };
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(!waiting.is_finished(), "the account's second turn waits");
        let released = Instant::now();
        drop(first);
        assert_eq!(waiting.await.unwrap(), released);
        assert_eq!(turns.len(), 0, "no account is kept once its turns are done");
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_past_the_limit_is_a_503_and_forgets_nothing_held() {
        let turns = Turns::default();
        let first = turns
            .take("acc_a", Instant::now() + LIMIT, LIMIT)
            .await
            .unwrap();
        let started = Instant::now();
        let Err(e) = turns.take("acc_a", Instant::now() + LIMIT, LIMIT).await else {
            panic!("a turn while the first is held past the limit");
        };
        assert!(matches!(e, DbError::Pool(_)), "{e}");
        assert_eq!(started.elapsed(), LIMIT);
        assert_eq!(turns.len(), 1, "the held turn is kept");
        drop(first);
        assert_eq!(turns.len(), 0);
        // And the account's next turn is at once.
        drop(
            turns
                .take("acc_a", Instant::now() + LIMIT, LIMIT)
                .await
                .unwrap(),
        );
    }
}
