fn show(src: &str) {
    let item: syn::ItemImpl = syn::parse_str(src).unwrap();
    match scan_lower::lower_impl(&item) {
        Ok(op) => println!("== {} ({}, {})\n-- combine:\n{}\n-- identity:\n{}\n", op.name, op.lhs, op.rhs, op.combine_body, op.identity_body),
        Err(e) => println!("== ERR\n{}\n", e.iter().map(|e| e.message.clone()).collect::<Vec<_>>().join("\n")),
    }
}
#[test]
fn scratch() {
    show(r#"impl ScanOp for Compose {
        type Elem = Affine;
        fn identity() -> Affine { Affine { a: 1.0, b: 0.0 } }
        fn combine(l: Affine, r: Affine) -> Affine {
            Affine { a: l.a * r.a, b: r.a * l.b + r.b }
        }
    }"#);
    show(r#"impl ScanOp for ArgMax {
        type Elem = Arg;
        fn identity() -> Arg { Arg { value: f32::NEG_INFINITY, index: u32::MAX } }
        fn combine(l: Arg, r: Arg) -> Arg {
            if r.value > l.value || (r.value == l.value && r.index < l.index) { r } else { l }
        }
    }"#);
    show(r#"impl ScanOp for Seg {
        type Elem = S;
        fn identity() -> S { S { flag: 0, value: 0 } }
        fn combine(l: S, r: S) -> S {
            let value = if r.flag != 0 { r.value } else { l.value.wrapping_add(r.value) };
            S { value, flag: l.flag | r.flag }
        }
    }"#);
    show(r#"impl ScanOp for RunMax {
        type Elem = i64;
        fn identity() -> i64 { i64::MIN }
        fn combine(a: i64, b: i64) -> i64 { a.max(b) }
    }"#);
    show(r#"impl ScanOp for Misc {
        type Elem = f32;
        fn identity() -> f32 { 0.0 }
        fn combine(a: f32, b: f32) -> f32 {
            let half = 0.1;
            let mut x: i32 = (a * half) as i32;
            x += 3;
            let k = x.wrapping_mul(7) as u8;
            let y = if k > 3 { let z = a + 1.5; z * z } else if a < 0.0 { -b } else { 2.0 };
            if y > 100.0 { return y; }
            let int = (k << 2) as f32;
            f32::max(y, int).mul_add(2.0, -0.5)
        }
    }"#);
    show(r#"impl ScanOp for Bad {
        type Elem = f32;
        fn identity(x: f32) -> f32 { 0.0 }
        fn combine(a: &f32, b: f32) -> f32 {
            let v = match a { _ => 1.0 };
            for i in 0..3 {}
            foo(a, b) + a.bar() + [1.0][0] + (|x| x)(1.0) + println!("x")
        }
    }"#);
}
