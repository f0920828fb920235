//! Compressed bodies. Requests: DynamoDB accepts `Content-Encoding: gzip`
//! (one or more concatenated members) and `deflate` (zlib). A body that does
//! not decode, an unknown encoding, or an empty compressed body fails the
//! request with HTTP 500 as in DynamoDB; a body that inflates past the request
//! size limit is refused before it can exhaust memory. Responses: like
//! DynamoDB, a response of at least 4 KB is compressed when the request's
//! `Accept-Encoding` asks for gzip or deflate (and only then).

use ferrodyn_types::{DynamoError, ErrorKind};
use flate2::read::{MultiGzDecoder, ZlibDecoder};
use flate2::write::{GzEncoder, ZlibEncoder};
use flate2::Compression;
use std::io::Read;
use std::io::Write;

/// Decodes `body` per its Content-Encoding, reading at most `limit` bytes.
pub fn decode(
    encoding: Option<&str>,
    body: &[u8],
    limit: usize,
) -> Result<Option<Vec<u8>>, DynamoError> {
    let encoding = match encoding.map(str::trim) {
        None | Some("") | Some("identity") => return Ok(None),
        Some(e) => e.to_ascii_lowercase(),
    };
    let failed = || {
        DynamoError::internal(format!(
            "Cannot decode request body with Content-Encoding {encoding}"
        ))
    };
    if body.is_empty() {
        return Err(failed());
    }
    let reader: Box<dyn Read + '_> = match encoding.as_str() {
        "gzip" => Box::new(MultiGzDecoder::new(body)),
        "deflate" => Box::new(ZlibDecoder::new(body)),
        _ => return Err(failed()),
    };
    let mut out = Vec::new();
    reader
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|_| failed())?;
    if out.len() > limit {
        return Err(DynamoError::new(
            ErrorKind::RequestEntityTooLarge,
            "Request body after decompression exceeds the request size limit",
        ));
    }
    Ok(Some(out))
}

/// Responses smaller than this are sent as they are (DynamoDB's threshold).
pub const RESPONSE_COMPRESSION_THRESHOLD: usize = 4096;

/// The response encoding a request's `Accept-Encoding` allows, by HTTP's
/// rules: gzip or deflate with the highest quality value (`q`, default 1,
/// `q=0` refusing it), `*` standing for either one not named; on a tie, an
/// encoding named outright beats one reached through `*`, and an earlier one
/// a later one.
pub fn response_encoding(accept: Option<&str>) -> Option<&'static str> {
    let offered: Vec<(String, f32)> = accept?
        .split(',')
        .filter_map(|part| {
            let (name, parameters) = part.split_once(';').unwrap_or((part, ""));
            let name = name.trim().to_ascii_lowercase();
            (!name.is_empty()).then(|| (name, quality(parameters)))
        })
        .collect();
    // A name listed several times counts with its best quality.
    let quality_of = |wanted: &str| {
        offered
            .iter()
            .filter(|(name, _)| name == wanted)
            .map(|(_, q)| *q)
            .reduce(f32::max)
    };
    let star = offered.iter().position(|(name, _)| name == "*");
    // (encoding, quality, named outright, position in the header); gzip
    // comes first so that, all else equal, `*` means gzip as in DynamoDB.
    let candidates = ["gzip", "deflate"].into_iter().filter_map(|encoding| {
        match offered.iter().position(|(name, _)| name == encoding) {
            Some(at) => Some((encoding, quality_of(encoding).unwrap_or(1.0), true, at)),
            None => star.map(|at| (encoding, quality_of("*").unwrap_or(1.0), false, at)),
        }
    });
    let better = |a: &(&str, f32, bool, usize), b: &(&str, f32, bool, usize)| {
        a.1.total_cmp(&b.1).then(a.2.cmp(&b.2)).then(b.3.cmp(&a.3))
    };
    candidates
        .filter(|(_, quality, _, _)| *quality > 0.0)
        .fold(
            None,
            |best: Option<(&str, f32, bool, usize)>, c| match best {
                Some(b) if better(&c, &b).is_le() => Some(b),
                _ => Some(c),
            },
        )
        .map(|(encoding, _, _, _)| encoding)
}

/// The quality value of one Accept-Encoding entry, read the way DynamoDB
/// reads it: the first `q=` in its parameters, a value that is not a number
/// counting as 1 and values above 1 as 1.
fn quality(parameters: &str) -> f32 {
    let Some(at) = parameters.find("q=") else {
        return 1.0;
    };
    let value = parameters[at + 2..].split(';').next().unwrap_or("").trim();
    value.parse::<f32>().map_or(1.0, |q| q.min(1.0))
}

/// Compresses a response body with `encoding` ("gzip" or "deflate").
pub fn compress(encoding: &str, body: &[u8]) -> Vec<u8> {
    let level = Compression::new(6);
    let out = match encoding {
        "gzip" => {
            let mut e = GzEncoder::new(Vec::with_capacity(body.len() / 4), level);
            e.write_all(body).and_then(|_| e.finish())
        }
        _ => {
            let mut e = ZlibEncoder::new(Vec::with_capacity(body.len() / 4), level);
            e.write_all(body).and_then(|_| e.finish())
        }
    };
    out.expect("compressing into memory cannot fail")
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::{GzEncoder, ZlibEncoder};
    use flate2::Compression;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn decodes_gzip_members_and_deflate() {
        let mut two = gzip(b"{\"a\":");
        two.extend(gzip(b"1}"));
        assert_eq!(
            decode(Some("gzip"), &two, 100).unwrap().unwrap(),
            b"{\"a\":1}"
        );
        let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
        z.write_all(b"{}").unwrap();
        assert_eq!(
            decode(Some("deflate"), &z.finish().unwrap(), 100)
                .unwrap()
                .unwrap(),
            b"{}"
        );
        assert!(decode(None, b"{}", 100).unwrap().is_none());
    }

    #[test]
    fn response_encoding_follows_accept_encoding() {
        assert_eq!(response_encoding(Some("gzip")), Some("gzip"));
        assert_eq!(
            response_encoding(Some("identity, deflate")),
            Some("deflate")
        );
        assert_eq!(
            response_encoding(Some("gzip;q=0, deflate")),
            Some("deflate")
        );
        assert_eq!(response_encoding(Some("br")), None);
        assert_eq!(response_encoding(Some("*")), Some("gzip"));
        assert_eq!(response_encoding(Some("*, deflate")), Some("deflate"));
        assert_eq!(response_encoding(Some("*, deflate;q=0.5")), Some("gzip"));
        assert_eq!(
            response_encoding(Some("gzip;q=0.8, deflate;q=0.5")),
            Some("gzip")
        );
        assert_eq!(
            response_encoding(Some("br, gzip;q=0, deflate; q = 0.5 , identity;q=0")),
            Some("deflate")
        );
        assert_eq!(
            response_encoding(Some("br, identity, deflate, gzip")),
            Some("deflate")
        );
        assert_eq!(response_encoding(Some("identity")), None);
        // DynamoDB's reading of odd quality values.
        assert_eq!(
            response_encoding(Some("gzip;q=31,deflate;q=51")),
            Some("gzip")
        );
        assert_eq!(
            response_encoding(Some("deflate;q=0.5,gzip;q=0.x")),
            Some("gzip")
        );
        assert_eq!(response_encoding(Some("gzip;nq=0;q=1")), None);
        assert_eq!(response_encoding(Some("gzip;q =0;q=1")), Some("gzip"));
        assert_eq!(
            response_encoding(Some("gzip;q=0, gzip;q=1, gzip;q=0")),
            Some("gzip")
        );
        assert_eq!(response_encoding(Some("\"gzip\"")), None);
        assert_eq!(response_encoding(None), None);
        let body = vec![b'x'; 10_000];
        let packed = compress("gzip", &body);
        assert_eq!(
            decode(Some("gzip"), &packed, 20_000).unwrap().unwrap(),
            body
        );
    }

    #[test]
    fn rejects_bad_and_oversized_bodies() {
        assert_eq!(
            decode(Some("gzip"), b"not gzip", 100).unwrap_err().kind,
            ErrorKind::InternalServerError
        );
        assert_eq!(
            decode(Some("gzip"), b"", 100).unwrap_err().kind,
            ErrorKind::InternalServerError
        );
        assert_eq!(
            decode(Some("garbage"), b"{}", 100).unwrap_err().kind,
            ErrorKind::InternalServerError
        );
        let big = gzip(&vec![b' '; 1000]);
        assert_eq!(
            decode(Some("gzip"), &big, 100).unwrap_err().kind,
            ErrorKind::RequestEntityTooLarge
        );
    }
}
