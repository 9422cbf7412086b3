use autorepair::config::Limits;
use autorepair::generate::{BASE_EPOCH, Spec, generate};
fn main() {
    let n: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let snap = generate(&Spec::new(n, 42));
    let p = autorepair::plan::plan(&snap, BASE_EPOCH, &Limits::default(), 1);
    std::hint::black_box(&p);
    std::mem::forget(p);
}
