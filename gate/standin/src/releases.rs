//! Releases and their assets, following "Releases" and "Release assets" in GitHub's REST
//! description (<https://docs.github.com/en/rest/releases/releases>,
//! <https://docs.github.com/en/rest/releases/assets>). Uploads go to the upload URL the release
//! carries: `{base}/api/uploads/repos/{owner}/{repo}/releases/{id}/assets{?name,label}`, the
//! shape an Enterprise Server gives (`https://HOST/api/uploads/...`).

use serde_json::{Value, json};

use crate::http::{Recorded, Reply};
use crate::{ReleaseState, State};

fn error(status: u16, message: &str) -> Reply {
    Reply::json(
        status,
        &json!({ "message": message, "documentation_url": "https://docs.github.com/rest/releases" }),
    )
}

fn release_json(state: &State, release: &ReleaseState, base: &str) -> Value {
    let (owner, repo) = (&state.scenario.owner, &state.scenario.repo);
    json!({
        "id": release.id,
        "tag_name": release.tag,
        "name": release.name,
        "body": release.body,
        "draft": release.draft,
        "prerelease": false,
        "html_url": format!("{base}/{owner}/{repo}/releases/tag/{}", release.tag),
        "upload_url": format!(
            "{base}/api/uploads/repos/{owner}/{repo}/releases/{}/assets{{?name,label}}",
            release.id
        ),
        "assets": release.assets.iter().enumerate().map(|(i, (name, bytes))| json!({
            "id": release.id * 1000 + i as u64,
            "name": name,
            "size": bytes.len(),
            "state": "uploaded",
        })).collect::<Vec<_>>(),
    })
}

/// `/repos/{owner}/{repo}/releases...` (the part after the repository).
pub(crate) fn repo_route(
    state: &mut State,
    req: &Recorded,
    rest: &[&str],
    base: &str,
) -> Option<Reply> {
    Some(match (req.method.as_str(), rest) {
        ("POST", ["releases"]) => create(state, req, base),
        ("PATCH", ["releases", id]) => update(state, req, id, base),
        ("GET", ["releases", "tags", tag @ ..]) => {
            let tag = tag.join("/");
            match state.releases.iter().find(|r| r.tag == tag) {
                Some(release) => Reply::json(200, &release_json(state, release, base)),
                None => error(404, "Not Found"),
            }
        }
        _ => return None,
    })
}

/// "Create a release": `tag_name` required; a tag that does not exist yet is made from
/// `target_commitish` (default: the default branch), as GitHub does; `422` `already_exists`
/// for a second release of one tag.
fn create(state: &mut State, req: &Recorded, base: &str) -> Reply {
    let body = req.json();
    let Some(tag) = body.get("tag_name").and_then(Value::as_str) else {
        return error(422, "Validation Failed: tag_name is missing");
    };
    if state.releases.iter().any(|r| r.tag == tag) {
        return error(422, "Validation Failed: already_exists (tag_name)");
    }
    let tag_ref = format!("refs/tags/{tag}");
    if !state.git.refs.contains_key(&tag_ref) {
        let target = body
            .get("target_commitish")
            .and_then(Value::as_str)
            .unwrap_or(&state.scenario.default_branch)
            .to_owned();
        let Some(sha) = state.git.refs.get(&format!("refs/heads/{target}")).cloned() else {
            return error(422, "Validation Failed: target_commitish is invalid");
        };
        state.git.refs.insert(tag_ref, sha);
    }
    let id = state.next_id();
    let release = ReleaseState {
        id,
        tag: tag.to_owned(),
        name: body
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or(tag)
            .to_owned(),
        body: body
            .get("body")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        draft: body.get("draft").and_then(Value::as_bool).unwrap_or(false),
        assets: Vec::new(),
    };
    let reply = Reply::json(201, &release_json(state, &release, base));
    state.releases.push(release);
    reply
}

/// "Update a release": `draft` (the rest of the fields are not used here).
fn update(state: &mut State, req: &Recorded, id: &str, base: &str) -> Reply {
    let body = req.json();
    let Some(index) = state.releases.iter().position(|r| id.parse() == Ok(r.id)) else {
        return error(404, "Not Found");
    };
    if let Some(draft) = body.get("draft").and_then(Value::as_bool) {
        state.releases[index].draft = draft;
    }
    let release = state.releases[index].clone();
    Reply::json(200, &release_json(state, &release, base))
}

/// "Upload a release asset" on the upload host: `?name=` required, the raw body; `422`
/// `already_exists` for a second asset of one name.
pub(crate) fn upload(
    state: &mut State,
    req: &Recorded,
    owner: &str,
    repo: &str,
    id: &str,
) -> Reply {
    if !owner.eq_ignore_ascii_case(&state.scenario.owner)
        || !repo.eq_ignore_ascii_case(&state.scenario.repo)
    {
        return error(404, "Not Found");
    }
    let Some(name) = req.query("name").map(str::to_owned) else {
        return error(422, "Validation Failed: name is missing");
    };
    let Some(release) = state.releases.iter_mut().find(|r| id.parse() == Ok(r.id)) else {
        return error(404, "Not Found");
    };
    if release.assets.iter().any(|(n, _)| *n == name) {
        return error(422, "Validation Failed: already_exists (name)");
    }
    let index = release.assets.len() as u64;
    release.assets.push((name.clone(), req.body.clone()));
    Reply::json(
        201,
        &json!({
            "id": release.id * 1000 + index,
            "name": name,
            "size": req.body.len(),
            "state": "uploaded",
        }),
    )
}
