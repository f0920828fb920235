//! DynamoDB's Number: an exact decimal of at most 38 significant digits whose
//! magnitude lies between 1E-130 and 9.99…E+125 (or zero).
//!
//! The value is kept as `mantissa × 10^exponent` with the mantissa stripped of
//! trailing zeros, so two equal numbers always have the same representation
//! ("1.0", "1e0" and "+1" are the same Number), which makes derived equality and
//! hashing numeric. Arithmetic goes through `bigdecimal` so it is exact, and the
//! result is re-validated against DynamoDB's limits.

use bigdecimal::num_bigint::{BigInt, Sign};
use bigdecimal::BigDecimal;
use std::cmp::Ordering;
use std::fmt;

/// The most significant digits a Number may carry.
pub const MAX_DIGITS: usize = 38;
/// Largest allowed decimal exponent of the leading digit (9.99…E+125).
const MAX_ADJUSTED_EXPONENT: i64 = 125;
/// Smallest allowed decimal exponent of the leading digit (1E-130).
const MIN_ADJUSTED_EXPONENT: i64 = -130;

#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Number {
    negative: bool,
    /// Significant digits without trailing zeros; 0 for zero.
    mantissa: u128,
    /// Number of decimal digits in `mantissa` (0 for zero).
    digits: u8,
    /// Power of ten applied to the mantissa.
    exponent: i32,
}

/// Why a string or an arithmetic result is not a valid DynamoDB Number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NumberError {
    /// Not numeric at all ("dog", "NaN", " 1").
    NotNumeric,
    /// Magnitude above 9.99…E+125.
    Overflow,
    /// Non-zero magnitude below 1E-130.
    Underflow,
    /// More than 38 significant digits.
    Precision,
}

impl NumberError {
    /// DynamoDB's message for this error (the caller adds any prefix).
    pub fn message(&self, input: &str) -> String {
        match self {
            NumberError::NotNumeric => {
                format!("The parameter cannot be converted to a numeric value: {input}")
            }
            NumberError::Overflow => {
                "Number overflow. Attempting to store a number with magnitude larger than supported range".into()
            }
            NumberError::Underflow => {
                "Number underflow. Attempting to store a number with magnitude smaller than supported range".into()
            }
            NumberError::Precision => {
                "Attempting to store more than 38 significant digits in a Number".into()
            }
        }
    }
}

impl Number {
    pub fn zero() -> Number {
        Number {
            negative: false,
            mantissa: 0,
            digits: 0,
            exponent: 0,
        }
    }

    pub fn is_zero(&self) -> bool {
        self.mantissa == 0
    }

    pub fn is_negative(&self) -> bool {
        self.negative
    }

    /// Parses DynamoDB's number syntax: `[+-]digits[.digits][(e|E)[+-]digits]`,
    /// where either side of the point may be empty but not both.
    pub fn parse(text: &str) -> Result<Number, NumberError> {
        let bytes = text.as_bytes();
        let mut pos = 0;
        let mut negative = false;
        if let Some(&sign) = bytes.first() {
            if sign == b'+' || sign == b'-' {
                negative = sign == b'-';
                pos = 1;
            }
        }
        let int_start = pos;
        while pos < bytes.len() && bytes[pos].is_ascii_digit() {
            pos += 1;
        }
        let int_digits = &bytes[int_start..pos];
        let mut frac_digits: &[u8] = &[];
        if pos < bytes.len() && bytes[pos] == b'.' {
            pos += 1;
            let frac_start = pos;
            while pos < bytes.len() && bytes[pos].is_ascii_digit() {
                pos += 1;
            }
            frac_digits = &bytes[frac_start..pos];
        }
        if int_digits.is_empty() && frac_digits.is_empty() {
            return Err(NumberError::NotNumeric);
        }
        let mut exp: i64 = 0;
        if pos < bytes.len() && (bytes[pos] == b'e' || bytes[pos] == b'E') {
            pos += 1;
            let mut exp_negative = false;
            if pos < bytes.len() && (bytes[pos] == b'+' || bytes[pos] == b'-') {
                exp_negative = bytes[pos] == b'-';
                pos += 1;
            }
            let exp_start = pos;
            while pos < bytes.len() && bytes[pos].is_ascii_digit() {
                // Saturate: anything this large is out of range anyway.
                exp = (exp * 10 + i64::from(bytes[pos] - b'0')).min(1_000_000_000);
                pos += 1;
            }
            if pos == exp_start {
                return Err(NumberError::NotNumeric);
            }
            if exp_negative {
                exp = -exp;
            }
        }
        if pos != bytes.len() {
            return Err(NumberError::NotNumeric);
        }
        let exponent = exp - frac_digits.len() as i64;
        Number::from_digits(
            negative,
            int_digits.iter().chain(frac_digits).copied(),
            exponent,
        )
    }

    /// Builds a Number from ASCII digits (leading zeros allowed) times 10^exponent.
    fn from_digits(
        negative: bool,
        digits: impl Iterator<Item = u8> + Clone,
        exponent: i64,
    ) -> Result<Number, NumberError> {
        let significant: Vec<u8> = digits.skip_while(|&d| d == b'0').collect();
        let trailing_zeros = significant.iter().rev().take_while(|&&d| d == b'0').count();
        let kept = &significant[..significant.len() - trailing_zeros];
        if kept.is_empty() {
            return Ok(Number::zero());
        }
        if kept.len() > MAX_DIGITS {
            return Err(NumberError::Precision);
        }
        let exponent = exponent + trailing_zeros as i64;
        let adjusted = exponent + kept.len() as i64 - 1;
        if adjusted > MAX_ADJUSTED_EXPONENT {
            return Err(NumberError::Overflow);
        }
        if adjusted < MIN_ADJUSTED_EXPONENT {
            return Err(NumberError::Underflow);
        }
        let mantissa = kept
            .iter()
            .fold(0u128, |acc, &d| acc * 10 + u128::from(d - b'0'));
        Ok(Number {
            negative,
            mantissa,
            digits: kept.len() as u8,
            exponent: exponent as i32,
        })
    }

    /// Decimal exponent of the leading digit (the `e` in d.ddd × 10^e).
    fn adjusted_exponent(&self) -> i64 {
        i64::from(self.exponent) + i64::from(self.digits) - 1
    }

    fn to_big(&self) -> BigDecimal {
        let sign = if self.negative {
            Sign::Minus
        } else {
            Sign::Plus
        };
        let int = BigInt::from_biguint(sign, self.mantissa.into());
        BigDecimal::new(int, -i64::from(self.exponent))
    }

    fn from_big(value: BigDecimal) -> Result<Number, NumberError> {
        let (int, scale) = value.into_bigint_and_exponent();
        let negative = int.sign() == Sign::Minus;
        let text = int.magnitude().to_str_radix(10);
        let n = Number::from_digits(negative, text.bytes(), -scale)?;
        Ok(n)
    }

    /// Exact sum, failing as DynamoDB does when the result leaves the range or
    /// would need more than 38 digits (DynamoDB reports both as overflow).
    pub fn checked_add(&self, other: &Number) -> Result<Number, NumberError> {
        if self.is_zero() {
            return Ok(other.clone());
        }
        if other.is_zero() {
            return Ok(self.clone());
        }
        // A sum of two numbers whose digits are more than 38 places apart can
        // never fit; refuse before asking bigdecimal to build a huge value.
        let span = (self.adjusted_exponent().max(other.adjusted_exponent())
            - i64::from(self.exponent.min(other.exponent)))
        .unsigned_abs();
        if span > 2 * MAX_DIGITS as u64 + 2 {
            return Err(NumberError::Overflow);
        }
        Number::from_big(self.to_big() + other.to_big()).map_err(|e| match e {
            NumberError::Precision => NumberError::Overflow,
            other => other,
        })
    }

    pub fn checked_sub(&self, other: &Number) -> Result<Number, NumberError> {
        self.checked_add(&other.negated())
    }

    pub fn negated(&self) -> Number {
        let mut n = self.clone();
        if !n.is_zero() {
            n.negative = !n.negative;
        }
        n
    }

    /// Approximate number of bytes DynamoDB charges for this number: about one
    /// byte per two significant digits, plus one.
    pub fn storage_size(&self) -> usize {
        if self.is_zero() {
            return 1;
        }
        // Digits are counted from the leading digit down to the units place or
        // the last significant digit, whichever covers more.
        usize::from(self.digits).div_ceil(2) + 1
    }

    /// Appends an encoding whose byte order equals numeric order and that is
    /// prefix-free, so it can sit anywhere inside a storage key.
    pub fn encode_ordered(&self, out: &mut Vec<u8>) {
        if self.is_zero() {
            out.push(0x02);
            return;
        }
        let start = out.len();
        out.push(if self.negative { 0x01 } else { 0x03 });
        let body = out.len();
        out.push((self.adjusted_exponent() - MIN_ADJUSTED_EXPONENT) as u8);
        // Digit nibbles are stored as digit+1 so that the 0 nibble terminates.
        let text = self.mantissa.to_string();
        let mut nibbles: Vec<u8> = text.bytes().map(|d| d - b'0' + 1).collect();
        nibbles.push(0);
        if nibbles.len() % 2 == 1 {
            nibbles.push(0);
        }
        for pair in nibbles.chunks(2) {
            out.push(pair[0] << 4 | pair[1]);
        }
        if self.negative {
            for b in &mut out[body..] {
                *b = !*b;
            }
        }
        debug_assert!(out.len() - start <= 22);
    }

    /// The value as an f64, only for approximate uses (never for storage).
    pub fn to_f64_lossy(&self) -> f64 {
        self.to_string().parse().unwrap_or(0.0)
    }

    /// The value as an i64 if it is an integer that fits.
    pub fn to_i64(&self) -> Option<i64> {
        if self.exponent < 0 || self.exponent > 18 {
            return if self.is_zero() { Some(0) } else { None };
        }
        let magnitude = self
            .mantissa
            .checked_mul(10u128.checked_pow(self.exponent as u32)?)?;
        let value = i64::try_from(magnitude).ok()?;
        Some(if self.negative { -value } else { value })
    }

    fn compare_magnitude(&self, other: &Number) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        self.adjusted_exponent()
            .cmp(&other.adjusted_exponent())
            .then_with(|| {
                // Scale both mantissas to exactly 38 digits; 10^38 fits in u128.
                let a = self.mantissa * 10u128.pow(u32::from(MAX_DIGITS as u8 - self.digits));
                let b = other.mantissa * 10u128.pow(u32::from(MAX_DIGITS as u8 - other.digits));
                a.cmp(&b)
            })
    }
}

impl Ord for Number {
    fn cmp(&self, other: &Number) -> Ordering {
        match (self.negative, other.negative) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => self.compare_magnitude(other),
            (true, true) => other.compare_magnitude(self),
        }
    }
}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Number) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Number {
    /// Plain decimal notation, never scientific, as DynamoDB returns numbers.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_zero() {
            return f.write_str("0");
        }
        let mut out = String::with_capacity(48);
        if self.negative {
            out.push('-');
        }
        let digits = self.mantissa.to_string();
        if self.exponent >= 0 {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', self.exponent as usize));
        } else {
            let point = digits.len() as i64 + i64::from(self.exponent);
            if point > 0 {
                out.push_str(&digits[..point as usize]);
                out.push('.');
                out.push_str(&digits[point as usize..]);
            } else {
                out.push_str("0.");
                out.extend(std::iter::repeat_n('0', (-point) as usize));
                out.push_str(&digits);
            }
        }
        f.write_str(&out)
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Number({self})")
    }
}

impl From<i64> for Number {
    fn from(value: i64) -> Number {
        Number::parse(&value.to_string()).expect("an i64 is always a valid Number")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Number {
        Number::parse(s).unwrap()
    }

    #[test]
    fn normalises_like_dynamodb() {
        let cases = [
            ("007", "7"),
            ("001.23", "1.23"),
            ("+0", "0"),
            ("-0.0", "0"),
            ("1.10", "1.1"),
            ("100.000", "100"),
            ("1e3", "1000"),
            ("1.23e4", "12300"),
            ("123e-2", "1.23"),
            ("1e-3", "0.001"),
            (".5", "0.5"),
            ("-.5", "-0.5"),
            ("0e5", "0"),
            ("1e-20", "0.00000000000000000001"),
            ("-273.15", "-273.15"),
        ];
        for (input, expected) in cases {
            assert_eq!(n(input).to_string(), expected, "{input}");
        }
        assert_eq!(n("1e125").to_string(), format!("1{}", "0".repeat(125)));
    }

    #[test]
    fn rejects_invalid_syntax() {
        for s in [
            "NaN",
            "Infinity",
            "-Infinity",
            "dog",
            " 1",
            "1 ",
            "",
            ".",
            "1e",
            "e5",
            "1.2.3",
            "--1",
        ] {
            assert_eq!(Number::parse(s), Err(NumberError::NotNumeric), "{s:?}");
        }
    }

    #[test]
    fn enforces_range_and_precision() {
        assert!(Number::parse("9.9999999999999999999999999999999999999E+125").is_ok());
        assert_eq!(Number::parse("1E+126"), Err(NumberError::Overflow));
        assert!(Number::parse("1E-130").is_ok());
        assert_eq!(Number::parse("1E-131"), Err(NumberError::Underflow));
        assert_eq!(
            Number::parse("1e99999999999999999999"),
            Err(NumberError::Overflow)
        );
        assert!(Number::parse(&"1".repeat(38)).is_ok());
        assert_eq!(Number::parse(&"1".repeat(39)), Err(NumberError::Precision));
        assert!(Number::parse(&format!("{}000", "1".repeat(38))).is_ok());
        assert!(Number::parse("0.0000000000000000000000000000000000000000000").is_ok());
    }

    #[test]
    fn arithmetic_is_exact() {
        let a = n("9999999999999999999999");
        assert_eq!(
            a.checked_add(&n("2")).unwrap().to_string(),
            "10000000000000000000001"
        );
        assert_eq!(n("0.1").checked_add(&n("0.2")).unwrap(), n("0.3"));
        assert_eq!(n("5").checked_sub(&n("7")).unwrap(), n("-2"));
        assert_eq!(
            n("9.9e125").checked_add(&n("1e125")),
            Err(NumberError::Overflow)
        );
        assert_eq!(
            n("1e125").checked_add(&n("1e-125")),
            Err(NumberError::Overflow)
        );
        let a38 = n(&"1".repeat(38));
        assert_eq!(a38.checked_add(&n("0.5")), Err(NumberError::Overflow));
    }

    #[test]
    fn ordering_is_numeric_and_encoding_preserves_it() {
        let mut values: Vec<Number> = [
            "-1e125", "-100", "-99.5", "-1", "-0.001", "-1e-130", "0", "1e-130", "0.001", "0.5",
            "1", "1.5", "2", "10", "99.99", "100", "1e125",
        ]
        .iter()
        .map(|s| n(s))
        .collect();
        let sorted = values.clone();
        values.reverse();
        values.sort();
        assert_eq!(values, sorted);
        for pair in sorted.windows(2) {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            pair[0].encode_ordered(&mut a);
            pair[1].encode_ordered(&mut b);
            assert!(a < b, "{:?} should encode below {:?}", pair[0], pair[1]);
        }
    }

    #[test]
    fn integer_conversion() {
        assert_eq!(n("1000").to_i64(), Some(1000));
        assert_eq!(n("-42").to_i64(), Some(-42));
        assert_eq!(n("1.5").to_i64(), None);
    }
}
