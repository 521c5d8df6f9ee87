//! GitHub's GraphQL API (<https://docs.github.com/en/graphql>): one mutation,
//! `createCommitOnBranch`.
//!
//! A request is `POST` to the GraphQL endpoint ([`crate::ApiUrl::graphql_url`]) with a JSON body
//! `{"query": "...", "variables": {...}}` ("Forming calls with GraphQL", "Communicating with
//! GraphQL" and "Working with variables",
//! <https://docs.github.com/en/graphql/guides/forming-calls-with-graphql>). The answer is `200`
//! with `data` and, when something failed, `errors` (each with a `message`, and `path`,
//! `locations` and GitHub's `type`), as the GraphQL specification's "Response" section defines it
//! (<https://spec.graphql.org/October2021/#sec-Response>). A response with any `errors` entry is
//! not a success, whatever `data` says.

use serde::{Deserialize, Serialize};

use crate::client::{Call, Client, Error, Replay};

/// The mutation, asking only for the new commit's id. From GitHub's public schema
/// (`schema.graphql`, the "Public schema" of the GraphQL reference;
/// <https://docs.github.com/en/graphql/reference/mutations#createcommitonbranch>):
///
/// ```graphql
/// createCommitOnBranch(input: CreateCommitOnBranchInput!): CreateCommitOnBranchPayload
/// type CreateCommitOnBranchPayload { clientMutationId: String  commit: Commit  ref: Ref }
/// ```
///
/// `Commit.oid` is a `GitObjectID!`. The input type is documented with the plan that carries it
/// (`gate::output::publish_plan_v2`).
pub const CREATE_COMMIT_ON_BRANCH: &str = "mutation($input: CreateCommitOnBranchInput!) { \
     createCommitOnBranch(input: $input) { commit { oid } } }";

#[derive(Serialize)]
struct Request<'a, V: Serialize> {
    query: &'a str,
    variables: V,
}

#[derive(Serialize)]
struct InputVariables<'a, I: Serialize> {
    input: &'a I,
}

/// One entry of `errors`.
#[derive(Debug, Clone, Deserialize)]
struct GraphQlError {
    #[serde(default)]
    message: Option<String>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
}

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    data: Option<CreateCommitOnBranchData>,
    #[serde(default)]
    errors: Vec<GraphQlError>,
}

#[derive(Deserialize)]
struct CreateCommitOnBranchData {
    #[serde(rename = "createCommitOnBranch")]
    payload: Option<Payload>,
}

#[derive(Deserialize)]
struct Payload {
    commit: Option<CommitOid>,
}

#[derive(Deserialize)]
struct CommitOid {
    oid: String,
}

/// The commit `createCommitOnBranch` reports having made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedCommit {
    pub oid: String,
}

impl Client {
    /// `createCommitOnBranch(input: $input)` with `input` sent as it is (a
    /// `CreateCommitOnBranchInput`). Sent as [`Replay::Once`]: never resent once it may have
    /// reached GitHub. `Ok` only for a `200` without `errors` that names a commit id of 40 hex
    /// digits; [`Error::GraphQl`] when GitHub answered with errors (or no commit).
    pub fn create_commit_on_branch<I: Serialize>(&self, input: &I) -> Result<CreatedCommit, Error> {
        let body = Request {
            query: CREATE_COMMIT_ON_BRANCH,
            variables: InputVariables { input },
        };
        let call = Call::graphql(&body, Replay::Once)?;
        let answer: Answer = self.json(&call, &[200])?;
        let redact = |text: &str| self.redact(text);
        if !answer.errors.is_empty() {
            return Err(Error::GraphQl {
                path: call.target(),
                messages: answer
                    .errors
                    .iter()
                    .map(|e| {
                        let message = e.message.as_deref().unwrap_or("(no message)");
                        match &e.kind {
                            Some(kind) => redact(&format!("{kind}: {message}")),
                            None => redact(message),
                        }
                    })
                    .collect(),
            });
        }
        let oid = answer
            .data
            .and_then(|d| d.payload)
            .and_then(|p| p.commit)
            .map(|c| c.oid);
        match oid {
            Some(oid)
                if oid.len() == 40
                    && oid.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) =>
            {
                Ok(CreatedCommit { oid })
            }
            other => Err(Error::GraphQl {
                path: call.target(),
                messages: vec![match other {
                    Some(oid) => format!("the commit id {:?} is not 40 hex digits", redact(&oid)),
                    None => "no commit in the response".to_owned(),
                }],
            }),
        }
    }
}
