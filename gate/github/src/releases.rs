//! Releases (<https://docs.github.com/en/rest/releases>): the release workflow creates one as a
//! draft on its tag, uploads the assets and `SHA256SUMS` to the upload URL GitHub returns, and
//! then publishes it, so that no one sees a release without its assets.

use serde::{Deserialize, Serialize};

use crate::client::{Call, Client, Error, Method, Replay};
use crate::{Repository, encode_component, encode_path};

/// A release (schema `release`), the fields read.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Release {
    pub id: u64,
    pub tag_name: String,
    pub draft: bool,
    /// A URI template, `https://uploads.github.com/repos/{owner}/{repo}/releases/{id}/assets{?name,label}`.
    pub upload_url: String,
    #[serde(default)]
    pub html_url: String,
    #[serde(default)]
    pub assets: Vec<ReleaseAsset>,
}

/// A release asset (schema `release-asset`), the fields read.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ReleaseAsset {
    pub id: u64,
    pub name: String,
    pub size: u64,
    /// `uploaded` once complete (`open` while an upload is in flight).
    pub state: String,
}

#[derive(Serialize)]
struct NewRelease<'a> {
    tag_name: &'a str,
    name: &'a str,
    body: &'a str,
    draft: bool,
    prerelease: bool,
}

#[derive(Serialize)]
struct ReleaseUpdate {
    draft: bool,
}

impl Client {
    /// `POST /repos/{owner}/{repo}/releases` ("Create a release",
    /// <https://docs.github.com/en/rest/releases/releases#create-a-release>; OpenAPI
    /// `paths["/repos/{owner}/{repo}/releases"].post`) as a **draft** on an existing tag; `201`.
    /// Sent as [`Replay::Once`]: a second one would be a second release.
    pub fn create_draft_release(
        &self,
        repo: &Repository,
        tag: &str,
        body: &str,
    ) -> Result<Release, Error> {
        let call = Call::with_json(
            Method::Post,
            repo.path("/releases"),
            &NewRelease {
                tag_name: tag,
                name: tag,
                body,
                draft: true,
                prerelease: false,
            },
            Replay::Once,
        )?;
        self.json(&call, &[201])
    }

    /// `PATCH /repos/{owner}/{repo}/releases/{release_id}` ("Update a release",
    /// <https://docs.github.com/en/rest/releases/releases#update-a-release>; OpenAPI
    /// `paths["/repos/{owner}/{repo}/releases/{release_id}"].patch`) with `draft: false`; `200`.
    pub fn publish_release(&self, repo: &Repository, id: u64) -> Result<Release, Error> {
        let call = Call::with_json(
            Method::Patch,
            repo.path(&format!("/releases/{id}")),
            &ReleaseUpdate { draft: false },
            Replay::Safe,
        )?;
        self.json(&call, &[200])
    }

    /// `GET /repos/{owner}/{repo}/releases/tags/{tag}` ("Get a release by tag name",
    /// <https://docs.github.com/en/rest/releases/releases#get-a-release-by-tag-name>; OpenAPI
    /// `paths["/repos/{owner}/{repo}/releases/tags/{tag}"].get`): `None` on `404`.
    pub fn release_by_tag(&self, repo: &Repository, tag: &str) -> Result<Option<Release>, Error> {
        let call = Call::get(repo.path(&format!("/releases/tags/{}", encode_path(tag))));
        let response = self.send(&call)?;
        if response.status == 404 {
            return Ok(None);
        }
        self.expect(&call, &response, &[200])?;
        self.decode(&call, &response).map(Some)
    }

    /// `POST {upload_url}?name=` ("Upload a release asset",
    /// <https://docs.github.com/en/rest/releases/assets#upload-a-release-asset>; OpenAPI
    /// `paths["/repos/{owner}/{repo}/releases/{release_id}/assets"].post`, server
    /// `https://uploads.github.com`): the raw bytes as `application/octet-stream`; `201`. The
    /// upload URL is the release's own, and must be on the upload host that goes with the API
    /// ([`crate::ApiUrl::upload_origin`]): the token goes nowhere else.
    pub fn upload_release_asset(
        &self,
        release: &Release,
        name: &str,
        bytes: &[u8],
    ) -> Result<ReleaseAsset, Error> {
        let template = release.upload_url.as_str();
        let base = template.split('{').next().unwrap_or(template);
        let expected = self.api_url().upload_origin();
        let fail = |message: String| Error::Transport {
            method: "POST",
            path: "(release upload URL)".to_owned(),
            message,
            may_have_reached: false,
        };
        let Some(path) = base.strip_prefix(&expected) else {
            return Err(fail(format!(
                "the release's upload URL {base:?} is not on {expected}, the upload host of the API"
            )));
        };
        if !path.starts_with('/') || path.contains(['?', '#', '@', '\\']) {
            return Err(fail(format!(
                "the release's upload URL {base:?} has an unexpected shape"
            )));
        }
        let url = format!("{base}?name={}", encode_component(name));
        let response = self.send_bytes(Method::Post, &url, "application/octet-stream", bytes)?;
        // The call as messages name it (the upload itself went to the absolute URL).
        let mut call = Call::get(path.to_owned());
        call.method = Method::Post;
        self.expect(&call, &response, &[201])?;
        self.decode(&call, &response)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::{ApiUrl, ClientConfig, SystemClock, Token};

    fn client(api: &str) -> Client {
        let token =
            Token::from_env(&|name| (name == "GH_TOKEN").then(|| "t0ken".to_owned())).unwrap();
        let config = ClientConfig::new(
            ApiUrl::parse(api).unwrap(),
            token,
            Arc::new(SystemClock::new()),
        );
        Client::new(config).unwrap()
    }

    #[test]
    fn the_upload_host_goes_with_the_api() {
        for (api, origin) in [
            ("https://api.github.com", "https://uploads.github.com"),
            ("https://ghe.example.com/api/v3", "https://ghe.example.com"),
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ] {
            assert_eq!(ApiUrl::parse(api).unwrap().upload_origin(), origin, "{api}");
        }
    }

    /// The token goes to no upload URL but the API's own upload host: refused before any
    /// connection (nothing listens on the API's port here).
    #[test]
    fn an_upload_url_on_another_host_is_refused_before_sending() {
        let client = client("http://127.0.0.1:9");
        for upload_url in [
            "https://uploads.github.com/repos/o/r/releases/1/assets{?name,label}",
            "http://127.0.0.1:9.evil.example/repos/o/r/releases/1/assets{?name,label}",
            "http://127.0.0.1:10/repos/o/r/releases/1/assets{?name,label}",
            "http://127.0.0.1:9@evil.example/repos/o/r/releases/1/assets",
            "http://127.0.0.1:9/x?redirect=https://evil.example/",
        ] {
            let release = Release {
                id: 1,
                tag_name: "v1.0.0".into(),
                draft: true,
                upload_url: upload_url.into(),
                html_url: String::new(),
                assets: Vec::new(),
            };
            let error = client
                .upload_release_asset(&release, "a.tar.gz", b"x")
                .unwrap_err()
                .to_string();
            assert!(
                error.contains("is not on http://127.0.0.1:9")
                    || error.contains("unexpected shape"),
                "{upload_url}: {error}"
            );
        }
    }
}
