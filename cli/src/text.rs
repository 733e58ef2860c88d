//! Small helpers for the text the commands print.

/// `n` and the noun, singular for one: "1 run", "2 runs", "0 runs".
/// Every noun the commands count takes a plain "s".
pub fn plural(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::plural;

    #[test]
    fn one_is_singular_and_the_rest_plural() {
        let check = |n: u64, want: &str| assert_eq!(plural(n, "run"), want);
        check(0, "0 runs");
        check(1, "1 run");
        check(2, "2 runs");
        check(10_800, "10800 runs");
    }
}
