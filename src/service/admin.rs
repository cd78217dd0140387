//! Operator actions on accounts and keys (`filestore admin`, and the first
//! start's bootstrap). They work straight on the database, so they take effect
//! at once, also while a server runs on the same data dir.

use crate::clock::rfc3339_ms;
use crate::config::Config;
use crate::db::{self, accounts, keys, Account, KeyRecord};
use crate::domain::ids::KeyKind;
use crate::domain::secret::Secret;
use crate::domain::{ids, origins};
use rusqlite::Connection;
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    NotFound(String),
    #[error(transparent)]
    Db(#[from] db::DbError),
}

/// An account as `admin` prints it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct AccountView {
    pub id: String,
    pub name: String,
    pub plan: String,
    pub grace_period: bool,
    pub created_at: String,
}

impl From<&Account> for AccountView {
    fn from(a: &Account) -> Self {
        AccountView {
            id: a.id.clone(),
            name: a.name.clone(),
            plan: a.plan.clone(),
            grace_period: a.grace_period,
            created_at: rfc3339_ms(a.created_at),
        }
    }
}

/// A key as `admin key list` prints it: never the secret.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct KeyView {
    pub id: String,
    pub kind: KeyKind,
    pub account: String,
    pub origins: Vec<String>,
    pub name: Option<String>,
    pub created_at: String,
    pub revoked: bool,
}

impl From<&KeyRecord> for KeyView {
    fn from(k: &KeyRecord) -> Self {
        KeyView {
            id: k.id.clone(),
            kind: k.kind,
            account: k.account_id.clone(),
            origins: k.origins.clone(),
            name: k.name.clone(),
            created_at: rfc3339_ms(k.created_at),
            revoked: k.revoked_at.is_some(),
        }
    }
}

/// A new key: the only time its secret is shown.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct NewKey {
    pub id: String,
    #[serde(rename = "key")]
    pub secret: Secret,
    pub kind: KeyKind,
    pub account: String,
    pub origins: Vec<String>,
}

fn check_plan(config: &Config, plan: &str) -> Result<(), AdminError> {
    if config.plans.get(plan).is_none() {
        return Err(AdminError::Invalid(format!(
            "unknown plan {plan:?} (plans: {})",
            config.plans.names().join(", ")
        )));
    }
    Ok(())
}

pub fn find_account(conn: &Connection, id_or_name: &str) -> Result<Account, AdminError> {
    accounts::find(conn, id_or_name)?
        .ok_or_else(|| AdminError::NotFound(format!("no account {id_or_name:?}")))
}

pub fn create_account(
    conn: &mut Connection,
    config: &Config,
    name: Option<&str>,
    plan: Option<&str>,
    now: i64,
) -> Result<Account, AdminError> {
    let plan = plan.unwrap_or(&config.default_plan).to_string();
    check_plan(config, &plan)?;
    let id = ids::account_id();
    let name = name.map(str::to_string).unwrap_or_else(|| id.clone());
    if name.is_empty() || name.len() > 100 || name.chars().any(char::is_control) {
        return Err(AdminError::Invalid(
            "account name: 1-100 characters, no control characters".into(),
        ));
    }
    let tx = db::write_tx(conn)?;
    if accounts::find(&tx, &name)?.is_some() {
        return Err(AdminError::Invalid(format!(
            "an account named {name:?} already exists"
        )));
    }
    let account = Account {
        id,
        name,
        plan,
        grace_period: false,
        storage_bytes: 0,
        created_at: now,
    };
    accounts::insert(&tx, &account)?;
    tx.commit()?;
    Ok(account)
}

pub fn set_account(
    conn: &Connection,
    config: &Config,
    id_or_name: &str,
    plan: Option<&str>,
    grace_period: Option<bool>,
) -> Result<Account, AdminError> {
    let account = find_account(conn, id_or_name)?;
    if let Some(plan) = plan {
        check_plan(config, plan)?;
        accounts::set_plan(conn, &account.id, plan)?;
    }
    if let Some(on) = grace_period {
        accounts::set_grace_period(conn, &account.id, on)?;
    }
    find_account(conn, &account.id)
}

pub fn create_key(
    conn: &mut Connection,
    account: &str,
    kind: KeyKind,
    origin_patterns: &[String],
    name: Option<&str>,
    now: i64,
) -> Result<NewKey, AdminError> {
    if kind == KeyKind::Secret && !origin_patterns.is_empty() {
        return Err(AdminError::Invalid(
            "--origin is for public keys only".into(),
        ));
    }
    let origins = origin_patterns
        .iter()
        .map(|o| origins::parse_pattern(o))
        .collect::<Result<Vec<_>, _>>()
        .map_err(AdminError::Invalid)?;
    let account = find_account(conn, account)?;
    let secret = ids::key_secret(kind);
    let record = KeyRecord {
        id: ids::key_id(),
        account_id: account.id.clone(),
        kind,
        name: name.map(str::to_string),
        origins: origins.clone(),
        created_at: now,
        revoked_at: None,
    };
    keys::insert(conn, &record, &ids::key_hash(&secret))?;
    Ok(NewKey {
        id: record.id,
        secret: Secret::new(secret),
        kind: record.kind,
        account: account.id,
        origins,
    })
}

pub fn list_keys(conn: &Connection, account: Option<&str>) -> Result<Vec<KeyRecord>, AdminError> {
    let account_id = match account {
        Some(a) => Some(find_account(conn, a)?.id),
        None => None,
    };
    Ok(keys::list(conn, account_id.as_deref())?)
}

pub fn revoke_key(conn: &Connection, key_id: &str, now: i64) -> Result<KeyRecord, AdminError> {
    let key = keys::get(conn, key_id)?
        .ok_or_else(|| AdminError::NotFound(format!("no key {key_id:?}")))?;
    keys::revoke(conn, key_id, now)?;
    keys::get(conn, &key.id)?.ok_or_else(|| AdminError::NotFound(format!("no key {key_id:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounts_keys_and_revocation() {
        let (dir, db) = crate::db::test_db();
        let config = Config::for_data_dir(dir.path());
        let mut c = db.conn().unwrap();
        let a = create_account(&mut c, &config, Some("team"), Some("hobby"), 1).unwrap();
        assert!(create_account(&mut c, &config, Some("team"), None, 1).is_err());
        assert!(create_account(&mut c, &config, Some("x"), Some("gold"), 1).is_err());
        let k = create_key(
            &mut c,
            "team",
            KeyKind::Public,
            &["https://app.example.com".into()],
            None,
            2,
        )
        .unwrap();
        assert!(k.secret.expose().starts_with("pk_"));
        assert!(
            !format!("{k:?}").contains(k.secret.expose()),
            "Debug never shows a secret"
        );
        assert!(create_key(
            &mut c,
            "team",
            KeyKind::Secret,
            &["https://a.b".into()],
            None,
            2
        )
        .is_err());
        assert!(create_key(&mut c, "team", KeyKind::Public, &["nope".into()], None, 2).is_err());
        let found = keys::find_active_by_hash(&c, &ids::key_hash(k.secret.expose()))
            .unwrap()
            .unwrap();
        assert_eq!(found.account_id, a.id);
        revoke_key(&c, &k.id, 3).unwrap();
        assert!(
            keys::find_active_by_hash(&c, &ids::key_hash(k.secret.expose()))
                .unwrap()
                .is_none()
        );
        let set = set_account(&c, &config, "team", Some("pro"), Some(true)).unwrap();
        assert_eq!((set.plan.as_str(), set.grace_period), ("pro", true));
    }
}
