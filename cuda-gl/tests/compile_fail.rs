//! The lifetime rules, checked by the compiler: each file in `tests/ui/` must fail to compile with
//! the error recorded beside it.

#[test]
fn misuse_does_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
