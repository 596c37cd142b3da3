//! The crate's layers (see the crate doc): code in a module uses only its own layer and the
//! layers below it. Test modules (after `#[cfg(test)]`) and comments are not checked.

use std::fs;
use std::path::{Path, PathBuf};

/// Top-level module -> layer; lower numbers are lower layers.
const LAYERS: &[(&str, u8)] = &[
    ("engine", 0),
    ("config", 1),
    ("net", 2),
    ("stats", 2),
    ("traces", 2),
    ("qdisc", 3),
    ("transport", 3),
    ("traffic", 3),
    ("gateway", 3),
    ("sim", 4),
    ("atm", 4),
    ("scenario", 5),
    ("results", 5),
    ("studies", 5),
];

fn layer(module: &str) -> Option<u8> {
    LAYERS
        .iter()
        .find(|(name, _)| *name == module)
        .map(|&(_, rank)| rank)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("source folder") {
        let path = entry.expect("folder entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules named as `crate::X` in the non-test, non-comment code of `text`.
fn crate_references(text: &str) -> Vec<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut found = Vec::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (at, _) in line.match_indices("crate::") {
            let rest = &line[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            found.push(name);
        }
    }
    found
}

#[test]
fn no_module_imports_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut violations = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        let top = relative
            .components()
            .next()
            .expect("a component")
            .as_os_str();
        let module = top.to_string_lossy().trim_end_matches(".rs").to_string();
        let Some(own) = layer(&module) else { continue };
        let text = fs::read_to_string(file).expect("readable source");
        for used in crate_references(&text) {
            if layer(&used).is_some_and(|rank| rank > own) {
                violations.push(format!("{}: uses crate::{used}", relative.display()));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports running up the layers:\n{}",
        violations.join("\n")
    );
}

#[test]
fn every_top_level_module_has_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    for line in lib.lines().filter(|l| l.starts_with("pub mod ")) {
        let name = line.trim_start_matches("pub mod ").trim_end_matches(';');
        assert!(
            layer(name).is_some(),
            "module {name} has no layer in this test"
        );
    }
}
