//! Issue labels, which pull requests share (<https://docs.github.com/en/rest/issues/labels>).

use serde::{Deserialize, Serialize};

use crate::Repository;
use crate::client::{Call, Client, Error, Method, Replay};

/// A label (schema `label`); the field used here.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Label {
    pub name: String,
}

#[derive(Serialize)]
struct NewLabels<'a> {
    labels: &'a [&'a str],
}

impl Client {
    /// `POST /repos/{owner}/{repo}/issues/{issue_number}/labels` ("Add labels to an issue",
    /// <https://docs.github.com/en/rest/issues/labels#add-labels-to-an-issue>; OpenAPI
    /// `paths["/repos/{owner}/{repo}/issues/{issue_number}/labels"].post`): body `labels` (names;
    /// a missing label is created); `200` with every label the issue now has. Adding a label it
    /// has already changes nothing, so the request is [`Replay::Safe`].
    pub fn add_labels(
        &self,
        repo: &Repository,
        number: u64,
        labels: &[&str],
    ) -> Result<Vec<Label>, Error> {
        let call = Call::with_json(
            Method::Post,
            repo.path(&format!("/issues/{number}/labels")),
            &NewLabels { labels },
            Replay::Safe,
        )?;
        self.json(&call, &[200])
    }
}
