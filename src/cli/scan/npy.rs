//! The `.npy` format (NumPy's), read and written as raw element bytes: a header (magic,
//! version, a Python dict literal with `descr`, `fortran_order`, `shape`) then the data. The
//! `descr` is kept as written, so a structured dtype (a record array of the element's fields)
//! goes out as it came in. Written here rather than through a crate: the scan moves element
//! bytes of any `#[repr(C)]` layout, which typed npy writers do not take.

use scan_core::{ElementType, PrimType};

const MAGIC: &[u8] = b"\x93NUMPY";

/// An array's header and where its data starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyHeader {
    /// The `descr` value as written (`'<i4'`, or a list of fields).
    pub descr: String,
    pub fortran_order: bool,
    pub shape: Vec<u64>,
    pub data_offset: usize,
}

impl NpyHeader {
    pub fn len(&self) -> u64 {
        self.shape.iter().product()
    }
}

/// NumPy's type string of a primitive (`'<i4'`).
/// NumPy has no bfloat16: a bf16 is two opaque bytes (`'|V2'`), so a bf16 operator never
/// takes a float16 file for its own type, nor writes one.
pub fn typestr(p: PrimType) -> String {
    if p == PrimType::BF16 {
        return "'|V2'".into();
    }
    let kind = if p.is_float() {
        'f'
    } else if p.is_signed_int() {
        'i'
    } else {
        'u'
    };
    let order = if p.size() == 1 { '|' } else { '<' };
    format!("'{order}{kind}{}'", p.size())
}

/// The `descr` for an element written from raw bytes: the primitive's, or opaque bytes of
/// the element's size for a struct.
pub fn descr_of(element: &ElementType) -> String {
    match element {
        ElementType::Prim(p) => typestr(*p),
        ElementType::Struct(s) => format!("'|V{}'", s.size),
    }
}

pub fn parse(bytes: &[u8]) -> Result<NpyHeader, String> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err("not a .npy file (no \\x93NUMPY magic)".into());
    }
    let major = bytes[6];
    let (len, start): (usize, usize) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let end = start
        .checked_add(len)
        .filter(|&e| e <= bytes.len())
        .ok_or("the .npy header runs past the end of the file")?;
    let text =
        std::str::from_utf8(&bytes[start..end]).map_err(|_| "the .npy header is not text")?;
    let descr = dict_value(text, "descr").ok_or("the .npy header has no 'descr'")?;
    let fortran =
        dict_value(text, "fortran_order").ok_or("the .npy header has no 'fortran_order'")?;
    let shape = dict_value(text, "shape").ok_or("the .npy header has no 'shape'")?;
    let shape: Result<Vec<u64>, _> = shape
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::parse::<u64>)
        .collect();
    Ok(NpyHeader {
        descr: descr.to_string(),
        fortran_order: fortran.trim() == "True",
        shape: shape.map_err(|_| "the .npy shape is not a tuple of integers")?,
        data_offset: end,
    })
}

/// The value of `'key': value` in a dict literal: up to the comma at bracket depth 0.
fn dict_value<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let at = text.find(&format!("'{key}'"))? + key.len() + 2;
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
    let mut depth = 0i32;
    let mut quote = None;
    for (i, c) in rest.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']') => depth -= 1,
            (None, ',' | '}') if depth == 0 => return Some(rest[..i].trim()),
            _ => {}
        }
    }
    None
}

/// The header of a version-1.0 file (padded so the data starts on a 64-byte boundary).
pub fn header(descr: &str, shape: &[u64]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let shape = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}");
    let unpadded = MAGIC.len() + 4 + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    let mut out = MAGIC.to_vec();
    out.extend([1u8, 0]);
    out.extend((dict.len() as u16).to_le_bytes());
    out.extend(dict.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips() {
        let h = header("'<i4'", &[5]);
        assert_eq!(h.len() % 64, 0);
        let parsed = parse(&h).unwrap();
        assert_eq!(parsed.descr, "'<i4'");
        assert_eq!(parsed.shape, vec![5]);
        assert!(!parsed.fortran_order);
        assert_eq!(parsed.data_offset, h.len());
    }

    #[test]
    fn structured_descr_is_kept_whole() {
        let text =
            "{'descr': [('a', '<f4'), ('b', '<f4')], 'fortran_order': False, 'shape': (3, 2), }";
        assert_eq!(
            dict_value(text, "descr"),
            Some("[('a', '<f4'), ('b', '<f4')]")
        );
        assert_eq!(dict_value(text, "shape"), Some("(3, 2)"));
    }

    #[test]
    fn bad_files_are_errors() {
        assert!(parse(b"hello").is_err());
        let mut h = header("'<i4'", &[5]);
        h[8] = 0xff;
        h[9] = 0xff;
        assert!(parse(&h).is_err());
        assert_eq!(typestr(PrimType::U8), "'|u1'");
        assert_eq!(typestr(PrimType::F64), "'<f8'");
    }
}
