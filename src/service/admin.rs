//! Operator actions on accounts, keys and webhooks (`filestore admin`, and the first
//! start's bootstrap). They work straight on the metadata store, so they take
//! effect at once, also while servers run on the same store.

use crate::clock::rfc3339_ms;
use crate::config::Config;
use crate::db::{self, Account, KeyRecord, MetaStore, UploadPolicy, WebhookRow};
use crate::domain::ids::KeyKind;
use crate::domain::policy;
use crate::domain::secret::Secret;
use crate::domain::{ids, origins, validate, webhooks};
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

/// A key as `admin key list` and `GET /v1/keys` print it: never the secret.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct KeyView {
    /// `key_…`: also its S3 access key id (a secret key's).
    pub id: String,
    /// `secret` or `public`.
    #[schema(value_type = String)]
    pub kind: KeyKind,
    pub account: String,
    pub origins: Vec<String>,
    /// A public key's upload policy (null, null, empty: none).
    pub folder: Option<String>,
    pub max_size: Option<u64>,
    pub types: Vec<String>,
    pub name: Option<String>,
    #[schema(format = DateTime)]
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
            folder: k.policy.folder.clone(),
            max_size: k.policy.max_size,
            types: k.policy.types.clone(),
            name: k.name.clone(),
            created_at: rfc3339_ms(k.created_at),
            revoked: k.revoked_at.is_some(),
        }
    }
}

/// What a public key's uploads may be (`admin key create --folder
/// --max-size --type`; docs/api.md, "Upload tokens"): its files' folder,
/// their largest size and the types their bytes may have. Empty: what the
/// plan allows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyLimits {
    pub folder: Option<String>,
    pub max_size: Option<u64>,
    /// As given: each `type/subtype` or `type/*`.
    pub types: Vec<String>,
}

impl KeyLimits {
    fn is_empty(&self) -> bool {
        self.folder.is_none() && self.max_size.is_none() && self.types.is_empty()
    }

    /// The key's upload policy: folder and types checked and normalised.
    fn policy(&self) -> Result<UploadPolicy, AdminError> {
        if self.max_size == Some(0) {
            return Err(AdminError::Invalid("--max-size: at least 1 byte".into()));
        }
        let folder = match &self.folder {
            Some(f) => {
                validate::folder(f).map_err(|e| AdminError::Invalid(format!("--folder: {e}")))?
            }
            None => None,
        };
        let types = policy::parse_types(&self.types)
            .map_err(|e| AdminError::Invalid(format!("--type: {e}")))?;
        Ok(UploadPolicy {
            folder,
            max_size: self.max_size,
            types,
            ..Default::default()
        })
    }
}

/// A new key: the only time its secret is shown (`admin key create` and
/// `POST /v1/keys` print it as it is).
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct NewKey {
    /// `key_…`.
    pub id: String,
    /// `sk_…` or `pk_…`: shown only now.
    #[serde(rename = "key")]
    #[schema(value_type = String)]
    pub secret: Secret,
    /// `secret` or `public`.
    #[schema(value_type = String)]
    pub kind: KeyKind,
    pub account: String,
    pub name: Option<String>,
    pub origins: Vec<String>,
    pub folder: Option<String>,
    pub max_size: Option<u64>,
    pub types: Vec<String>,
    #[schema(format = DateTime)]
    pub created_at: String,
    /// A secret key's S3 credential (`service::s3_keys::with_credential`;
    /// absent for public keys).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub s3_access_key_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub s3_secret_access_key: Option<Secret>,
}

/// A plan the database has (every node enforces those; the built-in ones
/// are written there at the first start of any node or admin command).
async fn check_plan(meta: &dyn MetaStore, config: &Config, plan: &str) -> Result<(), AdminError> {
    let mut plans = super::plans::load(meta).await?;
    if plans.iter().next().is_none() {
        // A database no node has started on yet: the built-in plans.
        plans = super::plans::sync(meta, config, false, 0).await?.0;
    }
    if plans.get(plan).is_none() {
        return Err(AdminError::Invalid(format!(
            "unknown plan {plan:?}: the database has {} (a new plan: define it under \
             [plans.NAME] in the config, then `filestore admin plan apply`)",
            plans.names().join(", ")
        )));
    }
    Ok(())
}

pub async fn find_account(meta: &dyn MetaStore, id_or_name: &str) -> Result<Account, AdminError> {
    meta.find_account(id_or_name)
        .await?
        .ok_or_else(|| AdminError::NotFound(format!("no account {id_or_name:?}")))
}

pub async fn create_account(
    meta: &dyn MetaStore,
    config: &Config,
    name: Option<&str>,
    plan: Option<&str>,
    now: i64,
) -> Result<Account, AdminError> {
    let plan = plan.unwrap_or(&config.default_plan).to_string();
    check_plan(meta, config, &plan).await?;
    let id = ids::account_id();
    let name = name.map_or_else(|| id.clone(), str::to_string);
    if name.is_empty() || name.len() > 100 || name.chars().any(char::is_control) {
        return Err(AdminError::Invalid(
            "account name: 1-100 characters, no control characters".into(),
        ));
    }
    let account = Account {
        id,
        name,
        plan,
        grace_period: false,
        storage_bytes: 0,
        created_at: now,
    };
    if !meta.create_account(account.clone()).await? {
        return Err(AdminError::Invalid(format!(
            "an account named {:?} already exists",
            account.name
        )));
    }
    Ok(account)
}

pub async fn set_account(
    meta: &dyn MetaStore,
    config: &Config,
    id_or_name: &str,
    plan: Option<&str>,
    grace_period: Option<bool>,
) -> Result<Account, AdminError> {
    let account = find_account(meta, id_or_name).await?;
    if let Some(plan) = plan {
        check_plan(meta, config, plan).await?;
    }
    meta.set_account(&account.id, plan.map(str::to_string), grace_period)
        .await?
        .ok_or_else(|| AdminError::NotFound(format!("no account {id_or_name:?}")))
}

pub async fn create_key(
    meta: &dyn MetaStore,
    account: &str,
    kind: KeyKind,
    origin_patterns: &[String],
    name: Option<&str>,
    now: i64,
) -> Result<NewKey, AdminError> {
    create_key_with(
        meta,
        account,
        kind,
        origin_patterns,
        &KeyLimits::default(),
        name,
        now,
    )
    .await
}

/// How a door names the fields of a new key in its refusals: the CLI's
/// flags, or the API's JSON fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wording {
    /// The origins (`--origin`, `origins`).
    pub origin: &'static str,
    /// How origins are given, for the example of a refusal.
    pub origin_example: &'static str,
    /// The upload policy's fields.
    pub limits: &'static str,
}

/// `filestore admin key create`'s flags.
pub const CLI_WORDING: Wording = Wording {
    origin: "--origin",
    origin_example: "--origin https://app.example.com; repeatable",
    limits: "--max-size, --type and --folder",
};

/// The longest key name, in characters.
const NAME_MAX: usize = 100;

/// [`create_key`] with a public key's upload policy (`limits`).
pub async fn create_key_with(
    meta: &dyn MetaStore,
    account: &str,
    kind: KeyKind,
    origin_patterns: &[String],
    limits: &KeyLimits,
    name: Option<&str>,
    now: i64,
) -> Result<NewKey, AdminError> {
    let ask = KeyAsk {
        kind,
        origins: origin_patterns,
        limits,
        name,
    };
    create_key_worded(meta, account, &ask, &CLI_WORDING, now).await
}

/// What a new key is asked to be.
#[derive(Debug, Clone, Copy)]
pub struct KeyAsk<'a> {
    pub kind: KeyKind,
    pub origins: &'a [String],
    pub limits: &'a KeyLimits,
    pub name: Option<&'a str>,
}

/// Creates a key of `account`, its refusals worded as `words` says (the
/// one home of the rules of a new key, whichever door asks).
pub async fn create_key_worded(
    meta: &dyn MetaStore,
    account: &str,
    ask: &KeyAsk<'_>,
    words: &Wording,
    now: i64,
) -> Result<NewKey, AdminError> {
    let KeyAsk {
        kind,
        origins: origin_patterns,
        limits,
        name,
    } = *ask;
    if let Some(n) = name {
        if n.is_empty() || n.chars().count() > NAME_MAX || n.chars().any(char::is_control) {
            return Err(AdminError::Invalid(format!(
                "key name: 1-{NAME_MAX} characters, no control characters"
            )));
        }
    }
    if kind == KeyKind::Token {
        return Err(AdminError::Invalid(
            "--kind is secret or public (upload tokens come from `filestore token create`)".into(),
        ));
    }
    if kind == KeyKind::Public && origin_patterns.is_empty() {
        return Err(AdminError::Invalid(format!(
            "{} is required for public keys: a public key uploads only from browser \
pages of its origins ({})",
            words.origin, words.origin_example
        )));
    }
    if kind == KeyKind::Secret && !origin_patterns.is_empty() {
        return Err(AdminError::Invalid(format!(
            "{} is for public keys only",
            words.origin
        )));
    }
    if kind == KeyKind::Secret && !limits.is_empty() {
        return Err(AdminError::Invalid(format!(
            "{} are for public keys only",
            words.limits
        )));
    }
    let policy = limits.policy()?;
    let origins = origin_patterns
        .iter()
        .map(|o| origins::parse_pattern(o))
        .collect::<Result<Vec<_>, _>>()
        .map_err(AdminError::Invalid)?;
    let account = find_account(meta, account).await?;
    let secret = ids::key_secret(kind);
    let record = KeyRecord {
        id: ids::key_id(),
        account_id: account.id.clone(),
        kind,
        name: name.map(str::to_string),
        origins: origins.clone(),
        created_at: now,
        revoked_at: None,
        policy,
    };
    meta.create_key(record.clone(), ids::key_hash(&secret))
        .await?;
    Ok(NewKey {
        id: record.id,
        secret: Secret::new(secret),
        kind: record.kind,
        account: account.id,
        name: record.name,
        origins,
        folder: record.policy.folder,
        max_size: record.policy.max_size,
        types: record.policy.types,
        created_at: rfc3339_ms(now),
        s3_access_key_id: None,
        s3_secret_access_key: None,
    })
}

pub async fn list_keys(
    meta: &dyn MetaStore,
    account: Option<&str>,
) -> Result<Vec<KeyRecord>, AdminError> {
    let account_id = match account {
        Some(a) => Some(find_account(meta, a).await?.id),
        None => None,
    };
    Ok(meta.list_keys(account_id.as_deref()).await?)
}

pub async fn revoke_key(
    meta: &dyn MetaStore,
    key_id: &str,
    now: i64,
) -> Result<KeyRecord, AdminError> {
    let not_found = || AdminError::NotFound(format!("no key {key_id:?}"));
    let key = meta.key(key_id).await?.ok_or_else(not_found)?;
    meta.revoke_key(key_id, now).await?;
    meta.key(&key.id).await?.ok_or_else(not_found)
}

/// A webhook subscription as `admin webhook list` and `GET /v1/webhooks`
/// print it: never the secret.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct WebhookView {
    /// `wh_…`.
    pub id: String,
    pub url: String,
    pub events: Vec<String>,
    pub account: String,
    #[schema(format = DateTime)]
    pub created_at: String,
}

impl From<&WebhookRow> for WebhookView {
    fn from(w: &WebhookRow) -> Self {
        WebhookView {
            id: w.id.clone(),
            url: w.url.clone(),
            events: w.events.clone(),
            account: w.account_id.clone(),
            created_at: rfc3339_ms(w.created_at),
        }
    }
}

/// A new subscription: the only time its secret is shown (`admin webhook
/// create` and `POST /v1/webhooks` print it as it is).
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct NewWebhook {
    /// `wh_…`.
    pub id: String,
    pub url: String,
    pub events: Vec<String>,
    /// `whsec_<base64>`: shown only now.
    #[schema(value_type = String)]
    pub secret: Secret,
    pub account: String,
    #[schema(format = DateTime)]
    pub created_at: String,
}

pub async fn create_webhook(
    meta: &dyn MetaStore,
    account: &str,
    url: &str,
    events: &[String],
    now: i64,
) -> Result<NewWebhook, AdminError> {
    let url = webhooks::url(url).map_err(AdminError::Invalid)?;
    let events = webhooks::events(events).map_err(AdminError::Invalid)?;
    let account = find_account(meta, account).await?;
    let row = WebhookRow {
        id: ids::webhook_id(),
        account_id: account.id,
        url,
        events,
        secret: Secret::new(webhooks::new_secret()),
        created_at: now,
    };
    meta.create_webhook(row.clone()).await?;
    Ok(NewWebhook {
        id: row.id,
        url: row.url,
        events: row.events,
        secret: row.secret,
        account: row.account_id,
        created_at: rfc3339_ms(row.created_at),
    })
}

pub async fn list_webhooks(
    meta: &dyn MetaStore,
    account: Option<&str>,
) -> Result<Vec<WebhookRow>, AdminError> {
    let account_id = match account {
        Some(a) => Some(find_account(meta, a).await?.id),
        None => None,
    };
    Ok(meta.list_webhooks(account_id.as_deref()).await?)
}

/// Removes a subscription (its undelivered events are dropped); returns it.
pub async fn delete_webhook(meta: &dyn MetaStore, id: &str) -> Result<WebhookRow, AdminError> {
    meta.delete_webhook(id)
        .await?
        .ok_or_else(|| AdminError::NotFound(format!("no webhook {id:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::SqliteStore;

    #[tokio::test]
    async fn accounts_keys_and_revocation() {
        let (dir, db) = crate::db::sqlite::test_db();
        let config = Config::for_data_dir(dir.path());
        let store = SqliteStore::new(db);
        let m: &dyn MetaStore = &store;
        let a = create_account(m, &config, Some("team"), Some("hobby"), 1)
            .await
            .unwrap();
        assert!(create_account(m, &config, Some("team"), None, 1)
            .await
            .is_err());
        assert!(create_account(m, &config, Some("x"), Some("gold"), 1)
            .await
            .is_err());
        let k = create_key(
            m,
            "team",
            KeyKind::Public,
            &["https://app.example.com".into()],
            None,
            2,
        )
        .await
        .unwrap();
        assert!(k.secret.expose().starts_with("pk_"));
        assert!(
            !format!("{k:?}").contains(k.secret.expose()),
            "Debug never shows a secret"
        );
        assert!(
            create_key(m, "team", KeyKind::Secret, &["https://a.b".into()], None, 2)
                .await
                .is_err()
        );
        assert!(
            create_key(m, "team", KeyKind::Public, &["nope".into()], None, 2)
                .await
                .is_err()
        );
        let no_origin = create_key(m, "team", KeyKind::Public, &[], None, 2)
            .await
            .unwrap_err();
        assert!(
            matches!(&no_origin, AdminError::Invalid(m) if m.starts_with("--origin is required for public keys")),
            "{no_origin:?}"
        );
        let (found, account) = m
            .key_by_hash(ids::key_hash(k.secret.expose()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!((found.account_id, account.id), (a.id.clone(), a.id));
        revoke_key(m, &k.id, 3).await.unwrap();
        assert!(m
            .key_by_hash(ids::key_hash(k.secret.expose()))
            .await
            .unwrap()
            .is_none());
        let set = set_account(m, &config, "team", Some("pro"), Some(true))
            .await
            .unwrap();
        assert_eq!((set.plan.as_str(), set.grace_period), ("pro", true));
    }

    #[tokio::test]
    async fn a_public_key_carries_an_upload_policy() {
        let (dir, db) = crate::db::sqlite::test_db();
        let config = Config::for_data_dir(dir.path());
        let store = SqliteStore::new(db);
        let m: &dyn MetaStore = &store;
        create_account(m, &config, Some("team"), None, 1)
            .await
            .unwrap();
        let origin = ["https://app.example.com".to_string()];
        let limits = KeyLimits {
            folder: Some("avatars/".into()),
            max_size: Some(5_000_000),
            types: vec!["IMAGE/*".into(), "image/*".into(), "application/pdf".into()],
        };
        let k = create_key_with(m, "team", KeyKind::Public, &origin, &limits, None, 2)
            .await
            .unwrap();
        assert_eq!(k.folder.as_deref(), Some("avatars"), "normalised");
        assert_eq!(k.max_size, Some(5_000_000));
        assert_eq!(
            k.types,
            ["image/*", "application/pdf"],
            "lowercased, once each"
        );
        let (found, _) = m
            .key_by_hash(ids::key_hash(k.secret.expose()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(found.policy.folder.as_deref(), Some("avatars"));
        assert_eq!(found.policy.max_size, Some(5_000_000));
        assert_eq!(found.policy.types, ["image/*", "application/pdf"]);
        assert_eq!(found.policy.private, None);
        let listed = list_keys(m, Some("team")).await.unwrap();
        let view = KeyView::from(&listed[0]);
        assert_eq!(
            (view.folder.as_deref(), view.max_size, view.types.len()),
            (Some("avatars"), Some(5_000_000), 2)
        );
        // A key without a policy has an empty one.
        let plain = create_key(m, "team", KeyKind::Public, &origin, None, 3)
            .await
            .unwrap();
        assert_eq!((plain.folder, plain.max_size), (None, None));
        assert!(plain.types.is_empty());
    }

    #[tokio::test]
    async fn an_upload_policy_is_for_public_keys_and_must_be_valid() {
        let (dir, db) = crate::db::sqlite::test_db();
        let config = Config::for_data_dir(dir.path());
        let store = SqliteStore::new(db);
        let m: &dyn MetaStore = &store;
        create_account(m, &config, Some("team"), None, 1)
            .await
            .unwrap();
        for limits in [
            KeyLimits {
                max_size: Some(10),
                ..KeyLimits::default()
            },
            KeyLimits {
                types: vec!["image/*".into()],
                ..KeyLimits::default()
            },
            KeyLimits {
                folder: Some("a".into()),
                ..KeyLimits::default()
            },
        ] {
            let e = create_key_with(m, "team", KeyKind::Secret, &[], &limits, None, 2)
                .await
                .unwrap_err();
            assert!(
                e.to_string().contains("for public keys only"),
                "{limits:?}: {e}"
            );
        }
        let origin = ["https://app.example.com".to_string()];
        for limits in [
            KeyLimits {
                max_size: Some(0),
                ..KeyLimits::default()
            },
            KeyLimits {
                types: vec!["image".into()],
                ..KeyLimits::default()
            },
            KeyLimits {
                folder: Some("../up".into()),
                ..KeyLimits::default()
            },
        ] {
            let e = create_key_with(m, "team", KeyKind::Public, &origin, &limits, None, 2)
                .await
                .unwrap_err();
            assert!(matches!(e, AdminError::Invalid(_)), "{limits:?}: {e}");
        }
        assert!(
            create_key(m, "team", KeyKind::Token, &[], None, 2)
                .await
                .is_err(),
            "an upload token is not an API key"
        );
        assert!(
            m.list_keys(None).await.unwrap().is_empty(),
            "nothing stored"
        );
    }
}
