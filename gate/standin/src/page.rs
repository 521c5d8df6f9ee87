//! Lists served in pages, as GitHub serves them ("Using pagination in the REST API",
//! <https://docs.github.com/en/rest/using-the-rest-api/using-pagination-in-the-rest-api>, and
//! each list's `per_page`/`page` parameters: "The number of results per page (max 100)",
//! default 30; "The page number of the results to fetch", default 1). A `per_page` above the
//! list's maximum is served as the maximum. The `link` header names the `first`, `prev`,
//! `next` and `last` pages that exist, with absolute URLs carrying the request's other query
//! parameters; it is left out when everything fits on one page.

use serde_json::Value;

use crate::http::{Recorded, Reply};

/// GitHub's default page size.
pub const DEFAULT_PER_PAGE: usize = 30;
/// GitHub's largest page size for most lists.
pub const MAX_PER_PAGE: usize = 100;

fn invalid(parameter: &str) -> Reply {
    Reply::json(
        422,
        &serde_json::json!({
            "message": format!("Invalid value for parameter {parameter}"),
            "documentation_url": "https://docs.github.com/rest/using-the-rest-api/using-pagination-in-the-rest-api",
        }),
    )
}

/// The page of `items` that `req` asks for (`per_page` at most `max_per_page`), its body made
/// by `body(total_count, page_items)`, with the `link` header. `base` is the stand-in's URL.
pub fn serve(
    req: &Recorded,
    base: &str,
    items: Vec<Value>,
    max_per_page: usize,
    body: impl FnOnce(usize, Vec<Value>) -> Value,
) -> Reply {
    let number = |name: &str, default: usize| match req.query(name) {
        None => Some(default),
        Some(v) => v.parse::<usize>().ok(),
    };
    let Some(per_page) = number("per_page", DEFAULT_PER_PAGE) else {
        return invalid("per_page");
    };
    let Some(page) = number("page", 1) else {
        return invalid("page");
    };
    // `per_page=0` and `page=0` are not documented; served here as 1.
    let per_page = per_page.clamp(1, max_per_page);
    let page = page.max(1);
    let total = items.len();
    let last = total.div_ceil(per_page).max(1);
    let start = (page - 1).saturating_mul(per_page).min(total);
    let end = start.saturating_add(per_page).min(total);
    let page_items: Vec<Value> = items.into_iter().skip(start).take(end - start).collect();
    let mut reply = Reply::json(200, &body(total, page_items));
    if last > 1 {
        let url = |n: usize| page_url(req, base, n);
        let mut links = Vec::new();
        if page > 1 {
            links.push(format!("<{}>; rel=\"prev\"", url((page - 1).min(last))));
        }
        if page < last {
            links.push(format!("<{}>; rel=\"next\"", url(page + 1)));
            links.push(format!("<{}>; rel=\"last\"", url(last)));
        }
        if page > 1 {
            links.push(format!("<{}>; rel=\"first\"", url(1)));
        }
        reply.headers.push(("link".into(), links.join(", ")));
    }
    reply
}

/// The request's URL with `page=n` (its other parameters kept, in order).
fn page_url(req: &Recorded, base: &str, n: usize) -> String {
    let mut query: Vec<String> = req
        .query
        .iter()
        .filter(|(name, _)| name != "page")
        .map(|(name, value)| {
            format!(
                "{}={}",
                github::encode_component(name),
                github::encode_component(value)
            )
        })
        .collect();
    query.push(format!("page={n}"));
    format!("{base}{}?{}", req.path, query.join("&"))
}
