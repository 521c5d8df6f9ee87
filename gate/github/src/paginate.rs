//! Lists, followed to their end: every list this client reads asks for `per_page=100` and
//! follows the `link` header's `rel="next"` ("Using pagination in the REST API",
//! <https://docs.github.com/en/rest/using-the-rest-api/using-pagination-in-the-rest-api>: the
//! header is omitted when everything fits on one page; its URLs are to be used as given, and
//! they may name the repository by id, `/repositories/{id}/...`, not by `owner/repo`).
//!
//! A next page is fetched only from the API's own scheme, host and path prefix (the token goes
//! with it), never twice, and at most [`MAX_PAGES`] pages are read: a list longer than that is
//! refused ([`Error::TooManyPages`]), never cut short in silence.

use serde::de::DeserializeOwned;

use crate::client::{Call, Client, Error};

/// What every list asks for: GitHub's maximum page size.
pub const PER_PAGE: &str = "100";

/// The most pages read for one list: 1,000 results at 100 a page (also the most results
/// GitHub's run lists return for a filtered search, "List workflow runs for a workflow",
/// <https://docs.github.com/en/rest/actions/workflow-runs#list-workflow-runs-for-a-workflow>).
pub const MAX_PAGES: usize = 10;

/// A list response that pages: the next page's items are appended to this one's (a
/// `{total_count, <items>}` object keeps the first page's `total_count`).
pub trait Paged: DeserializeOwned {
    fn append(&mut self, next: Self);
}

impl<T: DeserializeOwned> Paged for Vec<T> {
    fn append(&mut self, next: Self) {
        self.extend(next);
    }
}

/// [`Paged`] for a `{total_count, <field>: [...]}` response type.
macro_rules! paged {
    ($($type:ty => $field:ident),* $(,)?) => {
        $(impl $crate::paginate::Paged for $type {
            fn append(&mut self, next: Self) {
                self.$field.extend(next.$field);
            }
        })*
    };
}
pub(crate) use paged;

impl Client {
    /// The whole list `call` asks for: [`Client::get_pages`], appended.
    pub fn get_all<P: Paged>(&self, call: &Call) -> Result<P, Error> {
        let mut pages = self.get_pages::<P>(call)?.into_iter();
        let mut all = pages.next().ok_or_else(|| Error::Decode {
            method: call.method.as_str(),
            path: call.target(),
            message: "no page".to_owned(),
        })?;
        for page in pages {
            all.append(page);
        }
        Ok(all)
    }

    /// Every page of the list `call` asks for (its first page with `per_page=100` added unless
    /// the call names a page size), decoded as `P`, in the order GitHub served them. Each
    /// page must answer `200`.
    pub fn get_pages<P: DeserializeOwned>(&self, call: &Call) -> Result<Vec<P>, Error> {
        let mut first = call.clone();
        if !first.query.iter().any(|(name, _)| *name == "per_page") {
            first = first.query("per_page", PER_PAGE);
        }
        let mut pages = Vec::new();
        let mut seen = vec![first.target()];
        let mut page_call = first;
        loop {
            let response = self.send(&page_call)?;
            self.expect(&page_call, &response, &[200])?;
            pages.push(self.decode::<P>(&page_call, &response)?);
            let next =
                next_link(response.header("link"), self.api_url().as_str()).map_err(|message| {
                    Error::Decode {
                        method: page_call.method.as_str(),
                        path: page_call.target(),
                        message: format!("the link header: {message}"),
                    }
                })?;
            let Some(next) = next else {
                return Ok(pages);
            };
            if pages.len() >= MAX_PAGES {
                return Err(Error::TooManyPages {
                    path: call.target(),
                    pages: MAX_PAGES,
                });
            }
            if seen.contains(&next) {
                return Err(Error::Decode {
                    method: page_call.method.as_str(),
                    path: page_call.target(),
                    message: format!("the link header's next page {next} was already read"),
                });
            }
            seen.push(next.clone());
            page_call = Call {
                path: next,
                query: Vec::new(),
                ..call.clone()
            };
        }
    }
}

/// The target (path and query under `api_base`) of the `rel="next"` link in a `link` header
/// (RFC 8288, "Web Linking": `<URI>; param=value, ...`; `rel` may list several relation types,
/// separated by spaces), or `None` when there is no header or no next link. A next link outside
/// `api_base`, with a fragment, white space or control characters, or more than one, is an
/// error.
pub fn next_link(header: Option<&str>, api_base: &str) -> Result<Option<String>, String> {
    let Some(header) = header else {
        return Ok(None);
    };
    let mut next = None;
    for (uri, params) in parse_links(header)? {
        let is_next = params.iter().any(|(name, value)| {
            name.eq_ignore_ascii_case("rel")
                && value
                    .split_ascii_whitespace()
                    .any(|rel| rel.eq_ignore_ascii_case("next"))
        });
        if !is_next {
            continue;
        }
        if next.is_some() {
            return Err("more than one rel=\"next\" link".to_owned());
        }
        next = Some(target_under(&uri, api_base)?);
    }
    Ok(next)
}

/// `uri` as a target under `api_base` (`/path?query`).
fn target_under(uri: &str, api_base: &str) -> Result<String, String> {
    let outside = || format!("the next page {uri:?} is not under the API URL {api_base}");
    let rest = uri
        .get(..api_base.len())
        .filter(|prefix| prefix.eq_ignore_ascii_case(api_base))
        .and_then(|_| uri.get(api_base.len()..))
        .ok_or_else(outside)?;
    if !rest.starts_with('/') {
        return Err(outside());
    }
    if !rest.bytes().all(|b| b.is_ascii_graphic()) || rest.contains(['#', '\\']) {
        return Err(format!(
            "the next page {uri:?} holds white space, control or non-ASCII characters, a \
             fragment or a backslash"
        ));
    }
    let path = rest.split('?').next().unwrap_or(rest);
    if path
        .split('/')
        .any(|s| s == "." || s == ".." || s.eq_ignore_ascii_case("%2e%2e"))
    {
        return Err(format!("the next page {uri:?} has dot segments"));
    }
    Ok(rest.to_owned())
}

/// The links of a `link` header: each URI with its parameters (names as written, values
/// unquoted).
#[allow(clippy::type_complexity)]
fn parse_links(header: &str) -> Result<Vec<(String, Vec<(String, String)>)>, String> {
    let malformed = |why: &str| format!("malformed ({why}): {header:?}");
    let mut links = Vec::new();
    let mut rest = header.trim_start();
    while !rest.is_empty() {
        let after = rest
            .strip_prefix('<')
            .ok_or_else(|| malformed("a link does not start with <"))?;
        let end = after
            .find('>')
            .ok_or_else(|| malformed("no > after the URI"))?;
        let uri = after[..end].to_owned();
        rest = after[end + 1..].trim_start();
        let mut params = Vec::new();
        while let Some(after) = rest.strip_prefix(';') {
            let after = after.trim_start();
            let name_end = after
                .find(|c: char| c == '=' || c == ';' || c == ',' || c.is_ascii_whitespace())
                .unwrap_or(after.len());
            let name = after[..name_end].to_owned();
            if name.is_empty() {
                return Err(malformed("a parameter without a name"));
            }
            rest = after[name_end..].trim_start();
            let mut value = String::new();
            if let Some(after) = rest.strip_prefix('=') {
                let after = after.trim_start();
                if let Some(quoted) = after.strip_prefix('"') {
                    let close = quoted
                        .find('"')
                        .ok_or_else(|| malformed("an unterminated quoted value"))?;
                    value = quoted[..close].to_owned();
                    rest = quoted[close + 1..].trim_start();
                } else {
                    let end = after
                        .find(|c: char| c == ';' || c == ',' || c.is_ascii_whitespace())
                        .unwrap_or(after.len());
                    value = after[..end].to_owned();
                    rest = after[end..].trim_start();
                }
            }
            params.push((name, value));
        }
        links.push((uri, params));
        match rest.strip_prefix(',') {
            Some(after) => rest = after.trim_start(),
            None if rest.is_empty() => {}
            None => return Err(malformed("text after a link")),
        }
    }
    Ok(links)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "https://api.github.com";

    #[test]
    fn github_link_headers_give_their_next_page() {
        let header = "<https://api.github.com/repositories/1300192/issues?page=2>; rel=\"prev\", \
                      <https://api.github.com/repositories/1300192/issues?page=4>; rel=\"next\", \
                      <https://api.github.com/repositories/1300192/issues?page=515>; rel=\"last\", \
                      <https://api.github.com/repositories/1300192/issues?page=1>; rel=\"first\"";
        assert_eq!(
            next_link(Some(header), BASE),
            Ok(Some("/repositories/1300192/issues?page=4".to_owned()))
        );
        let last_page = "<https://api.github.com/repositories/1/pulls?page=1>; rel=\"first\", \
                         <https://api.github.com/repositories/1/pulls?page=3>; rel=\"prev\"";
        assert_eq!(next_link(Some(last_page), BASE), Ok(None));
        assert_eq!(next_link(None, BASE), Ok(None));
        // Several relation types in one rel, an unquoted value, another parameter.
        assert_eq!(
            next_link(
                Some("<https://api.github.com/x?page=2>; title=t; rel=next"),
                BASE
            ),
            Ok(Some("/x?page=2".to_owned()))
        );
        assert_eq!(
            next_link(
                Some("<https://api.github.com/x?page=2>; rel=\"last next\""),
                BASE
            ),
            Ok(Some("/x?page=2".to_owned()))
        );
        // Enterprise Server's prefix.
        assert_eq!(
            next_link(
                Some("<https://ghe.example/api/v3/repos/o/r/pulls?page=2>; rel=\"next\""),
                "https://ghe.example/api/v3"
            ),
            Ok(Some("/repos/o/r/pulls?page=2".to_owned()))
        );
    }

    #[test]
    fn next_links_elsewhere_or_malformed_are_errors() {
        for header in [
            // Another host, a host that only starts like the API's, another scheme.
            "<https://evil.example/repos/o/r/pulls?page=2>; rel=\"next\"",
            "<https://api.github.com.evil.example/x?page=2>; rel=\"next\"",
            "<http://api.github.com/x?page=2>; rel=\"next\"",
            // Relative, a fragment, a dot segment, white space.
            "</x?page=2>; rel=\"next\"",
            "<https://api.github.com/x?page=2#f>; rel=\"next\"",
            "<https://api.github.com/a/../x?page=2>; rel=\"next\"",
            "<https://api.github.com/x?page=2 3>; rel=\"next\"",
            // Two next links, no angle brackets, an unterminated quote, trailing text.
            "<https://api.github.com/x?page=2>; rel=\"next\", <https://api.github.com/x?page=3>; rel=\"next\"",
            "https://api.github.com/x?page=2; rel=\"next\"",
            "<https://api.github.com/x?page=2>; rel=\"next",
            "<https://api.github.com/x?page=2>; rel=\"next\" junk",
        ] {
            assert!(
                next_link(Some(header), BASE).is_err(),
                "accepted {header:?}: {:?}",
                next_link(Some(header), BASE)
            );
        }
        // A next link under an Enterprise prefix must keep the prefix.
        assert!(
            next_link(
                Some("<https://ghe.example/repos/o/r/pulls?page=2>; rel=\"next\""),
                "https://ghe.example/api/v3"
            )
            .is_err()
        );
    }
}
