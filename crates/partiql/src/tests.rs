//! The parser's behaviour as a table: statements that parse (and into what),
//! and statements that fail with exactly which message.

use crate::ast::*;
use crate::values::to_value;
use crate::{parse, MAX_DEPTH};
use ferrodyn_types::{AttributeValue, Number};

fn error_of(statement: &str) -> String {
    match parse(statement) {
        Ok(parsed) => panic!("{statement:?} parsed as {parsed:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn malformed_statements_get_their_message_and_position() {
    let cases = [
        ("SELEC * FROM t", "unexpected 'SELEC', expected SELECT, INSERT, UPDATE, DELETE or EXISTS at line 1, column 1"),
        ("", "expected SELECT, INSERT, UPDATE, DELETE or EXISTS at the end of the statement"),
        ("SELECT * FROM", "expected a table name at the end of the statement"),
        ("SELECT * FROM \"t\" WHERE", "expected a value or an attribute at the end of the statement"),
        ("SELECT * FROM \"t\" WHERE a = 'x' 'y'", "unexpected string 'y' after the end of the statement at line 1, column 33"),
        ("SELECT * FROM \"t\" WHERE a = 'unterminated", "unterminated string at line 1, column 29"),
        ("SELECT * FROM \"t\nWHERE a = 1", "unterminated quoted identifier at line 1, column 15"),
        ("SELECT * FROM t WHERE a = 1 LIMIT 3", "Unsupported clause: LIMIT at line 1, column 29"),
        ("SELECT a FROM t\n  WHERE a # 1", "unexpected character '#' at line 2, column 11"),
        ("SELECT a[x] FROM t", "unexpected 'x', expected a list index at line 1, column 10"),
        ("SELECT a[-1] FROM t", "unexpected '-', expected a list index at line 1, column 10"),
        ("INSERT INTO t VALUES ('a')", "Unsupported clause: VALUES (DynamoDB inserts one item: VALUE {...}) at line 1, column 15"),
        ("INSERT INTO t VALUE {a: 1}", "unexpected 'a', expected a quoted attribute name ('name') at line 1, column 22"),
        ("INSERT INTO t VALUE {'a' 1}", "unexpected number 1, expected ':' at line 1, column 26"),
        ("INSERT INTO t VALUE {'a': 1", "expected ',' or '}' at the end of the statement"),
        ("UPDATE t WHERE a = 1", "unexpected 'WHERE', expected SET or REMOVE at line 1, column 10"),
        ("UPDATE t SET a 1 WHERE k = 1", "unexpected number 1, expected '=' at line 1, column 16"),
        ("UPDATE t SET a = 1", "expected WHERE at the end of the statement"),
        ("UPDATE t SET a = 1 WHERE k = 1 RETURNING ALL *", "unexpected '*', expected OLD or NEW at line 1, column 46"),
        ("DELETE t WHERE k = 1", "unexpected 't', expected FROM at line 1, column 8"),
        ("SELECT * FROM t WHERE a IS 3", "unexpected number 3, expected MISSING or NULL at line 1, column 28"),
        ("SELECT * FROM t WHERE a IN 3", "unexpected number 3, expected '[' or '(' after IN at line 1, column 28"),
        ("SELECT * FROM t WHERE a BETWEEN 1 OR 2", "unexpected 'OR', expected AND at line 1, column 35"),
        ("EXISTS SELECT * FROM t", "unexpected 'SELECT', expected '(' at line 1, column 8"),
    ];
    for (statement, expected) in cases {
        assert_eq!(error_of(statement), expected, "{statement}");
    }
}

#[test]
fn unsupported_clauses_are_flagged_as_such() {
    let error = parse("SELECT * FROM t GROUP BY a").unwrap_err();
    assert!(error.unsupported);
    assert!(!parse("SELECT * FROM").unwrap_err().unsupported);
}

#[test]
fn nesting_deeper_than_the_limit_is_an_error_not_a_stack_overflow() {
    let nots = format!("SELECT * FROM t WHERE {}a = 1", "NOT ".repeat(4096));
    assert!(error_of(&nots).contains("levels deep"));
    for (open, close) in [("(", ")"), ("[", "]"), ("<<", ">>"), ("- ", "")] {
        let deep = format!(
            "SELECT * FROM t WHERE a = {}1{}",
            open.repeat(4096),
            close.repeat(4096)
        );
        let message = error_of(&deep);
        assert!(
            message.contains(&format!("nested more than {MAX_DEPTH} levels deep")),
            "{open}: {message}"
        );
    }
    let maps = format!(
        "INSERT INTO t VALUE {}1{}",
        "{'a': ".repeat(4096),
        "}".repeat(4096)
    );
    assert!(error_of(&maps).contains("levels deep"));
    // Well within the limit is fine.
    let shallow = format!(
        "SELECT * FROM t WHERE a = {}1{}",
        "(".repeat(50),
        ")".repeat(50)
    );
    assert!(parse(&shallow).is_ok());
}

fn path(root: &str, steps: Vec<Step>) -> Path {
    Path {
        root: root.into(),
        steps,
    }
}

fn attr(name: &str) -> Box<Expr> {
    Box::new(Expr::Path(path(name, vec![])))
}

#[test]
fn select_with_index_projection_condition_and_order() {
    let parsed = parse(
        "select a.b[2], \"c d\" FROM \"Orders\".\"byDate\" WHERE pk = ? AND sk >= 3 ORDER BY sk DESC",
    )
    .unwrap();
    assert_eq!(parsed.parameters, 1);
    let Statement::Select(select) = parsed.statement else {
        panic!("not a select")
    };
    assert_eq!(select.table, "Orders");
    assert_eq!(select.index.as_deref(), Some("byDate"));
    assert_eq!(
        select.projection,
        Some(vec![
            path("a", vec![Step::Field("b".into()), Step::Index(2)]),
            path("c d", vec![])
        ])
    );
    assert_eq!(
        select.condition,
        Some(Expr::And(
            Box::new(Expr::Compare(
                Comparison::Eq,
                attr("pk"),
                Box::new(Expr::Param(0))
            )),
            Box::new(Expr::Compare(
                Comparison::Ge,
                attr("sk"),
                Box::new(Expr::Number("3".into()))
            )),
        ))
    );
    assert_eq!(
        select.order_by,
        vec![OrderBy {
            path: path("sk", vec![]),
            descending: true
        }]
    );
}

#[test]
fn precedence_is_not_then_and_then_or() {
    let parsed = parse("SELECT * FROM t WHERE a = 1 OR NOT b = 2 AND c IS NOT MISSING").unwrap();
    let Statement::Select(select) = parsed.statement else {
        panic!()
    };
    let b = Expr::Compare(
        Comparison::Eq,
        attr("b"),
        Box::new(Expr::Number("2".into())),
    );
    let c = Expr::Missing {
        operand: attr("c"),
        negated: true,
    };
    assert_eq!(
        select.condition,
        Some(Expr::Or(
            Box::new(Expr::Compare(
                Comparison::Eq,
                attr("a"),
                Box::new(Expr::Number("1".into()))
            )),
            Box::new(Expr::And(Box::new(Expr::Not(Box::new(b))), Box::new(c))),
        ))
    );
}

#[test]
fn update_with_several_set_and_remove_clauses_and_returning() {
    let parsed = parse(
        "UPDATE \"Music\" SET a = a + 1, b = list_append(b, [2]) SET c.d = set_add(c.d, <<'x'>>) \
         REMOVE e[1] WHERE k = 'a' RETURNING MODIFIED NEW *",
    )
    .unwrap();
    let Statement::Update(update) = parsed.statement else {
        panic!()
    };
    assert_eq!(update.actions.len(), 4);
    assert_eq!(
        update.actions[0],
        UpdateAction::Set(
            path("a", vec![]),
            Expr::Add(attr("a"), Box::new(Expr::Number("1".into())))
        )
    );
    assert!(
        matches!(&update.actions[1], UpdateAction::Set(_, Expr::Call(name, args)) if name == "list_append" && args.len() == 2)
    );
    assert_eq!(
        update.actions[3],
        UpdateAction::Remove(path("e", vec![Step::Index(1)]))
    );
    assert_eq!(update.returning, Some(Returning::ModifiedNew));
}

#[test]
fn literals_bind_to_attribute_values() {
    let parsed = parse(
        "INSERT INTO t VALUE {'s': 'it''s', 'n': -12.50, 'big': 12345678901234567890123456789012345678, \
         'b': TRUE, 'z': NULL, 'l': [1, 'x'], 'ns': <<1, 2>>, 'ss': <<'a'>>, 'p': ?, 'm': {'q': ?}}",
    )
    .unwrap();
    assert_eq!(parsed.parameters, 2);
    let Statement::Insert(insert) = parsed.statement else {
        panic!()
    };
    let params = [AttributeValue::S("one".into()), AttributeValue::Bool(false)];
    let AttributeValue::M(item) = to_value(&insert.value, &params).unwrap() else {
        panic!("not a map")
    };
    let n = |t: &str| AttributeValue::N(Number::parse(t).unwrap());
    assert_eq!(item["s"], AttributeValue::S("it's".into()));
    assert_eq!(item["n"], n("-12.5"));
    assert_eq!(item["big"], n("12345678901234567890123456789012345678"));
    assert_eq!(item["b"], AttributeValue::Bool(true));
    assert_eq!(item["z"], AttributeValue::Null);
    assert_eq!(
        item["l"],
        AttributeValue::L(vec![n("1"), AttributeValue::S("x".into())])
    );
    assert_eq!(
        item["ns"],
        AttributeValue::Ns(vec![
            Number::parse("1").unwrap(),
            Number::parse("2").unwrap()
        ])
    );
    assert_eq!(item["ss"], AttributeValue::Ss(vec!["a".into()]));
    assert_eq!(item["p"], AttributeValue::S("one".into()));
}

#[test]
fn values_that_dynamodb_cannot_store_are_refused() {
    let cases = [
        (
            "{'n': 123456789012345678901234567890123456789}",
            "Attempting to store more than 38 significant digits in a Number",
        ),
        (
            "{'s': <<1, 'a'>>}",
            "Set members must all be strings, all numbers or all binaries",
        ),
        ("{'s': <<1, 1.0>>}", "Input collection contains duplicates"),
        ("{'s': <<>>}", "An empty set is not a valid value"),
        ("{'a': 1, 'a': 2}", "Duplicate attribute name in a tuple: a"),
        ("{'a': b}", "Expected a value (a literal or a parameter)"),
    ];
    for (value, expected) in cases {
        let parsed = parse(&format!("INSERT INTO t VALUE {value}")).unwrap();
        let Statement::Insert(insert) = parsed.statement else {
            panic!()
        };
        assert_eq!(
            to_value(&insert.value, &[]).unwrap_err(),
            expected,
            "{value}"
        );
    }
}

#[test]
fn subtraction_without_spaces_is_not_a_negative_number() {
    let parsed = parse("UPDATE t SET a = a-1 WHERE k = 1").unwrap();
    let Statement::Update(update) = parsed.statement else {
        panic!()
    };
    assert_eq!(
        update.actions[0],
        UpdateAction::Set(
            path("a", vec![]),
            Expr::Subtract(attr("a"), Box::new(Expr::Number("1".into())))
        )
    );
}

#[test]
fn arbitrary_bytes_never_panic() {
    // A cheap deterministic fuzz: every prefix of a few statements, and
    // statements with characters swapped.
    let seeds = [
        "SELECT a.b[1], c FROM \"t\".\"i\" WHERE a = ? AND b IN [1, 2] OR NOT c BETWEEN 'a' AND 'b' ORDER BY sk DESC",
        "UPDATE \"t\" SET a = list_append(a, [<<1>>, {'x': -2}]) REMOVE b WHERE k = 'it''s' RETURNING ALL OLD *",
        "EXISTS(SELECT * FROM t WHERE k = 1 AND size(x) > 3)",
    ];
    for seed in seeds {
        let chars: Vec<char> = seed.chars().collect();
        for end in 0..=chars.len() {
            let prefix: String = chars[..end].iter().collect();
            let _ = parse(&prefix);
        }
        for i in 0..chars.len() {
            for replacement in ['(', ')', '\'', '"', '<', '>', '[', '?', '-', 'é'] {
                let mut mutated = chars.clone();
                mutated[i] = replacement;
                let _ = parse(&mutated.iter().collect::<String>());
            }
        }
    }
}
