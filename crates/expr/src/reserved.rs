//! DynamoDB's reserved words: attribute names that may not appear literally
//! in an expression and must be aliased through ExpressionAttributeNames.
//!
//! The list is AWS's published one (Developer Guide, "Reserved words in
//! DynamoDB"), kept verbatim in `reserved_words.txt` so it can be diffed
//! against the documentation.

use std::collections::HashSet;
use std::sync::OnceLock;

const WORDS: &str = include_str!("reserved_words.txt");

fn words() -> &'static HashSet<&'static str> {
    static SET: OnceLock<HashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| {
        WORDS
            .lines()
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .collect()
    })
}

/// Whether `name` (as written in the expression) is a reserved word.
/// The comparison is case-insensitive.
///
/// `size` is on the published list but DynamoDB accepts it as an attribute
/// name (the parser treats it as the function's identifier), so it is exempt.
pub fn is_reserved(name: &str) -> bool {
    if name.eq_ignore_ascii_case("size") {
        return false;
    }
    words().contains(name.to_ascii_uppercase().as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_is_complete_and_case_insensitive() {
        assert_eq!(words().len(), 573);
        assert!(is_reserved("status"));
        assert!(is_reserved("Status"));
        assert!(is_reserved("ZONE"));
        assert!(!is_reserved("size"));
        assert!(!is_reserved("attribute_exists"));
        assert!(!is_reserved("a"));
    }
}
