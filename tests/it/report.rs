//! `report --html` on each family's demo fleet (the README's tours), looked at the way a person
//! would: Debian's headless Chromium renders the page, and the screenshot must be a real image
//! of our page. `AUTOREPAIR_REGEN_SCREENSHOTS=1` also saves them as `docs/report-FAMILY.png`.

use assert_cmd::Command;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const WIDTH: u32 = 1280;
const HEIGHT: u32 = 1600;
/// The page's background (`body{background:#f7f8fa}`): the colour most of a screenshot of it is.
const BACKGROUND: [u8; 3] = [0xf7, 0xf8, 0xfa];

/// A copy of one family's demo fleet, and the arguments that reach it.
struct Demo {
    dir: tempfile::TempDir,
    args: Vec<String>,
    /// The fleet's files, which the report must leave as they were.
    files: Vec<PathBuf>,
    now: i64,
    /// Passes of the README's tour made before the screenshot, so that it shows repairs
    /// under way and ended.
    tour_passes: i64,
    /// Targets the page must show.
    names: &'static [&'static str],
}

impl Demo {
    fn new(family: &'static str) -> Demo {
        // The commands run in the copy's directory, on names as the README's tour gives them,
        // so that the page (and its screenshot in the docs) names the fleet as a reader would.
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(format!("{ROOT}/fixtures"), dir.path().join("fixtures"))
            .unwrap();
        let copy = |from: &str, to: &str| {
            std::fs::copy(format!("{ROOT}/fixtures/{from}"), dir.path().join(to)).unwrap();
            dir.path().join(to)
        };
        let config = ["--config", "/dev/null"].map(String::from);
        let path = |p: &Path| p.file_name().unwrap().to_str().unwrap().to_owned();
        let (args, files, now, tour_passes, names): (Vec<String>, Vec<PathBuf>, _, _, _) =
            match family {
                "ganeti" => {
                    let fleet = copy("demo.json", "demo.json");
                    let args = vec!["--cluster".into(), path(&fleet)];
                    (
                        args,
                        vec![fleet],
                        1_795_000_000,
                        0,
                        &["db-a1.ams.example", "db-b4.ams.example"][..],
                    )
                }
                "metal3" => {
                    let objects = copy("metal3-demo.json", "objects.json");
                    let args = vec!["--kube-objects".into(), path(&objects)];
                    (
                        args,
                        vec![objects],
                        1_795_402_800,
                        7,
                        &["prod/workers-7d9f-b2", "prod/edge-cp-x2k4"][..],
                    )
                }
                "machines" => {
                    let machines = copy("machines-demo.json", "machines.json");
                    let nodes = copy("machines-demo-nodes.json", "nodes.json");
                    let args = vec![
                        "--sabakan-file".into(),
                        path(&machines),
                        "--nodes".into(),
                        path(&nodes),
                        "--repair-config".into(),
                        "fixtures/machines-demo.yml".into(),
                        "--constraints".into(),
                        "fixtures/machines-constraints.json".into(),
                    ];
                    (
                        args,
                        vec![machines, nodes],
                        1_800_000_000,
                        6,
                        &["rack0-cs2", "rack1-cs1"][..],
                    )
                }
                other => panic!("no demo for {other}"),
            };
        Demo {
            dir,
            args: config.into_iter().chain(args).collect(),
            files,
            now,
            tour_passes,
            names,
        }
    }

    fn bin(&self) -> Command {
        let mut c = Command::cargo_bin("autorepair").unwrap();
        c.current_dir(self.dir.path())
            .env_remove("AUTOREPAIR_CONFIG")
            .env_remove("RUST_LOG")
            // The machines demo's repair command leaves its proof here.
            .env("AUTOREPAIR_DEMO_DIR", self.dir.path().join("repaired"))
            .args(&self.args);
        c
    }

    fn report(&self, name: &str, now: i64) -> (PathBuf, String) {
        let page = self.dir.path().join(name);
        let out = self
            .bin()
            .args(["report", "--now", &now.to_string(), "--html"])
            .arg(&page)
            .assert()
            .success();
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(stderr.contains("wrote the report of"), "{stderr}");
        assert!(
            out.get_output().stdout.is_empty(),
            "the page goes to the file only"
        );
        let html = std::fs::read_to_string(&page).unwrap();
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&page).unwrap().permissions(),
        );
        assert_eq!(
            mode & 0o777,
            0o644,
            "a web server must be able to read the page"
        );
        (page, html)
    }

    /// The README tour's passes, a minute apart; returns the clock after them.
    fn tour(&self) -> i64 {
        for i in 0..self.tour_passes {
            self.bin()
                .args(["run", "--now", &(self.now + 60 * i).to_string()])
                .assert()
                .code(predicates::ord::le(1));
        }
        self.now + 60 * self.tour_passes
    }
}

const FAMILIES: [&str; 3] = ["ganeti", "metal3", "machines"];

#[test]
fn the_report_of_each_demo_fleet_shows_every_section_and_changes_nothing() {
    for family in FAMILIES {
        let demo = Demo::new(family);
        let before: Vec<Vec<u8>> = demo
            .files
            .iter()
            .map(|f| std::fs::read(f).unwrap())
            .collect();
        let (_, html) = demo.report("page.html", demo.now);
        let after: Vec<Vec<u8>> = demo
            .files
            .iter()
            .map(|f| std::fs::read(f).unwrap())
            .collect();
        assert!(before == after, "{family}: the report wrote to the fleet");
        for section in ["grid", "pending", "limiter", "timeline"] {
            assert!(
                html.contains(&format!("<h2 id=\"{section}\">")),
                "{family}: no {section} section"
            );
        }
        for name in demo.names {
            assert!(
                html.contains(&format!(">{name}</div>")),
                "{family}: no cell for {name}"
            );
        }
        assert!(!html.contains("<script"), "{family}");
    }
}

#[test]
fn a_report_that_cannot_be_written_names_the_file_and_exits_3() {
    let demo = Demo::new("ganeti");
    let page = demo.dir.path().join("no-such-dir").join("page.html");
    let out = demo
        .bin()
        .args(["report", "--now", "1795000000", "--html"])
        .arg(&page)
        .assert()
        .code(3);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains(&format!("cannot write the report {}", page.display())),
        "{stderr}"
    );
}

/// Debian's Chromium, or the one `AUTOREPAIR_CHROMIUM` names.
fn chromium() -> PathBuf {
    std::env::var_os("AUTOREPAIR_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"))
}

/// Renders `page` with headless Chromium into `png`, offline, with a profile of its own.
fn screenshot(chromium: &Path, page: &Path, png: &Path) {
    let profile = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("--window-size={WIDTH},{HEIGHT}"))
        .arg(format!("file://{}", page.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("chromium took more than two minutes on {}", page.display());
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(
        status.success() && png.exists(),
        "chromium: {status}: {stderr}"
    );
}

/// The screenshot is a PNG of the asked size, and a picture of our page: its background shows,
/// and there is enough else on it (cells in five colours, tables, text) that it cannot be one
/// flat colour or a blank page.
fn assert_real_page(png: &Path) -> Vec<u8> {
    let file = std::io::BufReader::new(std::fs::File::open(png).unwrap());
    let mut decoder = png::Decoder::new(file);
    // The docs' copies are in 256 colours: read them as the colours they stand for.
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("a sane size")];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(
        (info.width, info.height),
        (WIDTH, HEIGHT),
        "{}",
        png.display()
    );
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let channels = match reader.output_color_type().0 {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("{}: colour type {other:?}", png.display()),
    };
    let rgb: Vec<u8> = buf[..info.buffer_size()]
        .chunks_exact(channels)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    let mut counts = std::collections::HashMap::<[u8; 3], usize>::new();
    for p in rgb.chunks_exact(3) {
        *counts.entry([p[0], p[1], p[2]]).or_default() += 1;
    }
    let pixels = (WIDTH * HEIGHT) as usize;
    let background = counts.get(&BACKGROUND).copied().unwrap_or(0);
    let most = counts.values().copied().max().unwrap();
    assert!(
        background * 20 >= pixels,
        "{}: only {background} of {pixels} pixels are the page's background",
        png.display()
    );
    assert!(
        counts.len() >= 32 && most * 10 <= pixels * 9,
        "{}: {} colours, the commonest on {most} of {pixels} pixels: a blank page?",
        png.display(),
        counts.len(),
    );
    rgb
}

/// Saves a screenshot for the docs in 256 colours (the page's most common ones, every other
/// pixel drawn in the nearest of them), so that it stays small in the repository.
fn save_for_docs(rgb: &[u8], to: &str) {
    let mut counts = std::collections::HashMap::<[u8; 3], usize>::new();
    for p in rgb.chunks_exact(3) {
        *counts.entry([p[0], p[1], p[2]]).or_default() += 1;
    }
    let mut by_use: Vec<([u8; 3], usize)> = counts.into_iter().collect();
    by_use.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let palette: Vec<[u8; 3]> = by_use.iter().take(256).map(|(c, _)| *c).collect();
    let mut nearest = std::collections::HashMap::<[u8; 3], u8>::new();
    let indices: Vec<u8> = rgb
        .chunks_exact(3)
        .map(|p| {
            let c = [p[0], p[1], p[2]];
            *nearest.entry(c).or_insert_with(|| {
                let distance = |q: &[u8; 3]| -> i32 {
                    (0..3)
                        .map(|i| (i32::from(c[i]) - i32::from(q[i])).pow(2))
                        .sum()
                };
                (0..palette.len())
                    .min_by_key(|&i| distance(&palette[i]))
                    .unwrap() as u8
            })
        })
        .collect();
    let file = std::io::BufWriter::new(std::fs::File::create(to).unwrap());
    let mut encoder = png::Encoder::new(file, WIDTH, HEIGHT);
    encoder.set_color(png::ColorType::Indexed);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_palette(palette.concat());
    encoder.set_compression(png::Compression::High);
    let mut writer = encoder.write_header().unwrap();
    writer.write_image_data(&indices).unwrap();
    writer.finish().unwrap();
}

#[test]
#[cfg_attr(
    not(have_chromium),
    ignore = "needs Debian's chromium: apt-get install chromium, or set AUTOREPAIR_CHROMIUM"
)]
fn chromium_renders_the_report_of_each_demo_fleet() {
    let chromium = chromium();
    let regen = std::env::var_os("AUTOREPAIR_REGEN_SCREENSHOTS").is_some();
    for family in FAMILIES {
        let demo = Demo::new(family);
        let now = demo.tour();
        let (page, _) = demo.report("report.html", now);
        let png = demo.dir.path().join("report.png");
        screenshot(&chromium, &page, &png);
        let rgb = assert_real_page(&png);
        if regen {
            save_for_docs(&rgb, &format!("{ROOT}/docs/report-{family}.png"));
        }
    }
}

#[test]
fn the_docs_show_a_small_screenshot_of_each_family() {
    for family in FAMILIES {
        let path = format!("{ROOT}/docs/report-{family}.png");
        let size = std::fs::metadata(&path)
            .unwrap_or_else(|e| {
                panic!("{path}: {e}: AUTOREPAIR_REGEN_SCREENSHOTS=1 cargo test --test it report::")
            })
            .len();
        assert!(size < 300 * 1024, "{path}: {size} bytes");
        assert_real_page(Path::new(&path));
    }
}
