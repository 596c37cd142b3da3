//! Trace readers: the same packets written in every format (pcap in microseconds and
//! nanoseconds, pcapng, ERF with an extension header, TSH, ITA, CSV, gzipped) read back alike,
//! and damaged or foreign files refused with the file and the problem named, randomly damaged
//! ones too.

use fairgate_core::config::ScenarioError;
use fairgate_core::studies::trace_gateway::{trace_study, TraceParams, TraceStudy};
use fairgate_core::studies::{never_interrupted, StudyError};
use fairgate_core::traces::{read_trace, TracePacket};
use proptest::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};

const T0: u64 = 1_000_000_000; // seconds of the first packet

fn ipv4(p: &TracePacket) -> Vec<u8> {
    let mut b = vec![0x45, 0, 0, 0, 0, 0, 0, 0, 64, p.proto, 0, 0];
    b[2..4].copy_from_slice(&(p.ip_len as u16).to_be_bytes());
    b.extend(p.src.to_be_bytes());
    b.extend(p.dst.to_be_bytes());
    b.extend(p.sport.to_be_bytes());
    b.extend(p.dport.to_be_bytes());
    b.extend([0u8; 12]); // the rest of a TCP header's first 16 bytes
    b
}

fn ethernet(p: &TracePacket) -> Vec<u8> {
    let mut f = vec![0u8; 12];
    f.extend([0x08, 0x00]);
    f.extend(ipv4(p));
    f
}

fn packets() -> Vec<TracePacket> {
    let p = |us: u64, src: u32, sport: u16, proto: u8, len: u32| TracePacket {
        time_ns: (T0 * 1_000_000 + us) * 1_000,
        src,
        dst: 0x0a00_0009,
        proto,
        sport,
        dport: 80,
        ip_len: len,
    };
    vec![
        p(0, 0x0a00_0001, 1000, 6, 1500),
        p(250, 0x0a00_0002, 53, 17, 80),
        p(1_500_000, 0x0a00_0001, 1001, 6, 40),
    ]
}

fn file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairgate-traces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn pcap(nanos: bool) -> Vec<u8> {
    let magic: u32 = if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
    let mut b = magic.to_le_bytes().to_vec();
    b.extend([
        2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0,
    ]);
    for p in packets() {
        let frame = ethernet(&p);
        let (secs, frac) = (p.time_ns / 1_000_000_000, p.time_ns % 1_000_000_000);
        let frac = if nanos { frac } else { frac / 1_000 };
        for word in [
            secs as u32,
            frac as u32,
            frame.len() as u32,
            frame.len() as u32,
        ] {
            b.extend(word.to_le_bytes());
        }
        b.extend(frame);
    }
    b
}

fn pcapng() -> Vec<u8> {
    let block = |kind: u32, body: Vec<u8>| {
        let len = (12 + body.len()) as u32;
        let mut b = kind.to_le_bytes().to_vec();
        b.extend(len.to_le_bytes());
        b.extend(body);
        b.extend(len.to_le_bytes());
        b
    };
    let mut shb = 0x1a2b_3c4d_u32.to_le_bytes().to_vec();
    shb.extend([1, 0, 0, 0]);
    shb.extend(u64::MAX.to_le_bytes());
    let mut out = block(0x0a0d_0d0a, shb);
    let mut idb = vec![1, 0, 0, 0, 0, 0, 0, 0]; // Ethernet, snaplen 0; microseconds
    idb.extend([0u8; 0]);
    out.extend(block(1, idb));
    for p in packets() {
        let ticks = p.time_ns / 1_000;
        let mut frame = ethernet(&p);
        let caplen = frame.len() as u32;
        frame.resize(frame.len().div_ceil(4) * 4, 0);
        let mut epb = 0u32.to_le_bytes().to_vec();
        epb.extend(((ticks >> 32) as u32).to_le_bytes());
        epb.extend((ticks as u32).to_le_bytes());
        epb.extend(caplen.to_le_bytes());
        epb.extend(caplen.to_le_bytes());
        epb.extend(frame);
        out.extend(block(6, epb));
    }
    out
}

fn erf() -> Vec<u8> {
    let mut b = Vec::new();
    for p in packets() {
        let (secs, nanos) = (p.time_ns / 1_000_000_000, p.time_ns % 1_000_000_000);
        let fixed = (secs << 32) | ((nanos << 32).div_ceil(1_000_000_000));
        let mut body = vec![0x04, 0, 0, 0, 0, 0, 0, 0]; // one extension header, no more
        body.extend([0u8, 0]); // Ethernet pad
        body.extend(ethernet(&p));
        let rlen = (16 + body.len()) as u16;
        b.extend(fixed.to_le_bytes());
        b.extend([2 | 0x80, 0]);
        b.extend(rlen.to_be_bytes());
        b.extend([0, 0]);
        b.extend(((body.len() - 10) as u16).to_be_bytes());
        b.extend(body);
    }
    b
}

fn tsh() -> Vec<u8> {
    let mut b = Vec::new();
    for p in packets() {
        let (secs, micros) = (p.time_ns / 1_000_000_000, p.time_ns / 1_000 % 1_000_000);
        b.extend((secs as u32).to_be_bytes());
        b.push(0);
        b.extend(&(micros as u32).to_be_bytes()[1..]);
        b.extend(&ipv4(&p)[..36]);
    }
    b
}

fn csv() -> String {
    let mut s = String::from("ts,src,dst,proto,sport,dport,ip_len\n");
    for p in packets() {
        let addr = |a: u32| std::net::Ipv4Addr::from(a).to_string();
        let (secs, nanos) = (p.time_ns / 1_000_000_000, p.time_ns % 1_000_000_000);
        s += &format!(
            "{secs}.{nanos:09},{},{},{},{},{},{}\n",
            addr(p.src),
            addr(p.dst),
            p.proto,
            p.sport,
            p.dport,
            p.ip_len
        );
    }
    s
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

fn read(path: &Path) -> Result<Vec<TracePacket>, String> {
    let mut got = Vec::new();
    read_trace(path, None, &mut |p| {
        got.push(p);
        true
    })
    .map_err(|e| e.to_string())?;
    Ok(got)
}

#[test]
fn every_format_reads_the_same_packets() {
    let want = packets();
    for (name, bytes) in [
        ("a.pcap", pcap(false)),
        ("b.pcap", pcap(true)),
        ("c.pcapng", pcapng()),
        ("d.erf", erf()),
        ("e.tsh", tsh()),
        ("f.csv", csv().into_bytes()),
        ("g.pcap.gz", gzip(&pcap(false))),
        ("h.erf.gz", gzip(&erf())),
    ] {
        assert_eq!(read(&file(name, &bytes)).unwrap(), want, "{name}");
    }
}

#[test]
fn an_ita_line_is_a_tcp_packet_of_its_data_bytes_plus_40() {
    let text = "0.000000 1 2 56396 80 535\n\n1.5 3 2 119 53739 0\n";
    let got = read(&file("t.tcp", text.as_bytes())).unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!((got[0].src, got[0].proto, got[0].ip_len), (1, 6, 575));
    assert_eq!((got[1].time_ns, got[1].ip_len), (1_500_000_000, 40));
}

#[test]
fn damaged_and_foreign_files_are_refused_naming_the_file_and_the_problem() {
    let truncated = pcap(false);
    let mut unknown_link = pcap(false);
    unknown_link[20] = 147; // a user link type
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "t.pcap",
            truncated[..truncated.len() - 5].to_vec(),
            "ends inside a record",
        ),
        ("u.pcap", unknown_link, "link type 147 is not read"),
        ("x.bin", b"hello".to_vec(), "neither a pcap or pcapng file"),
        ("e.csv", Vec::new(), "got no IP packet"),
        (
            "h.csv",
            b"time,a,b\n1,2,3\n".to_vec(),
            "expected the header",
        ),
        (
            "l.csv",
            csv().replace(",53,", ",99999,").into_bytes(),
            "line 3: `sport`",
        ),
        (
            "c.tcp",
            b"0.1 1 2 3 4\n".to_vec(),
            "line 1: got 5 columns, expected 6",
        ),
        ("n.tcp", vec![b'1'; 10_000], "longer than 4096 bytes"),
        ("b.csv", vec![0xff, 0xfe, b'\n'], "line 1 is not text"),
        ("r.erf", erf()[..20].to_vec(), "ends inside a record"),
        (
            "z.pcap.gz",
            gzip(&pcap(false))[..30].to_vec(),
            "cannot read it",
        ),
    ];
    for (name, bytes, expected) in cases {
        let path = file(name, &bytes);
        let e = study(&path, None, TraceParams::default()).unwrap_err();
        assert_eq!(e.path, "trace", "{name}: {e}");
        assert!(e.message.contains(name), "{name}: {e}");
        assert!(e.message.contains(expected), "{name}: {e}");
    }
    for not_a_file in [std::env::temp_dir(), PathBuf::from("/dev/zero")] {
        let tsh = Some("tsh");
        let e = study(&not_a_file, tsh, TraceParams::default()).unwrap_err();
        assert!(e.message.contains("not a regular file"), "{e}");
    }
    let missing = std::env::temp_dir().join("fairgate-no-such-trace.pcap");
    let e = study(&missing, None, TraceParams::default()).unwrap_err();
    assert!(e.message.contains("cannot open it"), "{e}");
    let e = study(
        &file("a.pcap", &pcap(false)),
        Some("wav"),
        TraceParams::default(),
    )
    .unwrap_err();
    assert_eq!(
        (e.path.as_str(), e.message.contains("expected one of pcap")),
        ("format", true)
    );
}

/// The study of a trace nobody interrupts; its errors are the trace's or a parameter's.
fn study(path: &Path, format: Option<&str>, p: TraceParams) -> Result<TraceStudy, ScenarioError> {
    trace_study(path, format, p, &mut never_interrupted).map_err(|e| match e {
        StudyError::Input(e) => e,
        other => panic!("not an input's error: {other}"),
    })
}

#[test]
fn an_interrupted_study_stops_reading() {
    let path = file("i.pcap", &pcap(false));
    let mut asked = 0;
    let e = trace_study(&path, None, TraceParams::default(), &mut || {
        asked += 1;
        true
    });
    assert_eq!((e.err(), asked), (Some(StudyError::Interrupted), 1));
}

#[test]
fn the_gateway_stops_at_its_packet_count() {
    let path = file("p.pcap", &pcap(false));
    let two = TraceParams {
        packets: 2,
        interval_s: 1e-4, // the two packets span 250 us: a study needs one sample
        ..TraceParams::default()
    };
    let study = study(&path, None, two).unwrap();
    assert_eq!(
        (study.summary.packets, study.summary.tcp, study.summary.udp),
        (2, 1, 1)
    );
}

fn valid_traces() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("pcap", pcap(false)),
        ("pcap", pcap(true)),
        ("pcapng", pcapng()),
        ("erf", erf()),
        ("tsh", tsh()),
        ("csv", csv().into_bytes()),
        (
            "tcp",
            b"0.000000 1 2 56396 80 535\n1.5 3 2 119 53739 0\n".to_vec(),
        ),
        ("pcap.gz", gzip(&pcap(false))),
    ]
}

/// One edit of a file's bytes: a byte set, a 32-bit word set (a length field made huge or
/// zero), a byte inserted or removed.
#[derive(Clone, Debug)]
enum Edit {
    Byte(usize, u8),
    Word(usize, u32),
    Insert(usize, u8),
    Remove(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let word = prop_oneof![Just(0u32), Just(u32::MAX), Just(0x7fff_ffff), any::<u32>()];
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Edit::Byte(at, b)),
        (any::<usize>(), word).prop_map(|(at, w)| Edit::Word(at, w)),
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Edit::Insert(at, b)),
        any::<usize>().prop_map(Edit::Remove),
    ]
}

fn edited(mut bytes: Vec<u8>, edits: &[Edit], cut: Option<usize>) -> Vec<u8> {
    for e in edits {
        let n = bytes.len().max(1);
        match *e {
            Edit::Byte(at, b) if !bytes.is_empty() => bytes[at % n] = b,
            Edit::Word(at, w) if bytes.len() >= 4 => {
                let at = at % (bytes.len() - 3);
                bytes[at..at + 4].copy_from_slice(&w.to_le_bytes());
            }
            Edit::Insert(at, b) => bytes.insert(at % (bytes.len() + 1), b),
            Edit::Remove(at) if !bytes.is_empty() => {
                bytes.remove(at % n);
            }
            _ => {}
        }
    }
    if let Some(cut) = cut {
        bytes.truncate(cut % (bytes.len() + 1));
    }
    bytes
}

fn fuzz_cases() -> u32 {
    if std::env::var_os("FAIRGATE_SLOW").is_some() {
        10_000
    } else {
        300
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: fuzz_cases(), failure_persistence: None, ..ProptestConfig::default() })]

    /// Damaged traces of every format (bytes set, length fields made huge or zero, bytes
    /// inserted or removed, the file cut) are read or refused naming the trace: never a
    /// panic, an allocation abort or a hang.
    #[test]
    fn damaged_traces_are_read_or_refused_never_a_panic(
        which in 0usize..8,
        edits in prop::collection::vec(edit(), 1..6),
        cut in prop::option::of(any::<usize>()),
    ) {
        let (format, bytes) = valid_traces().swap_remove(which);
        let damaged = edited(bytes, &edits, cut);
        let path = file(&format!("fuzz.{format}"), &damaged);
        let started = std::time::Instant::now();
        let params = TraceParams { interval_s: 1e-4, ..TraceParams::default() };
        if let Err(e) = study(&path, None, params) {
            prop_assert!(["trace", "format", "interval"].contains(&e.path.as_str()), "{e}");
        }
        // A hang guard, not a speed target: a case takes well under a millisecond.
        prop_assert!(started.elapsed().as_secs_f64() < 30.0, "{:?}", started.elapsed());
    }
}
