// The files dbdrift made for a vector campaign (float32 vectors and int32 exact neighbours,
// little-endian, row after row) and each vector's text as the engines take it: `[x,y,...]`,
// every float32 in the shortest form that reads back as the same value.

use super::spec::PLACEHOLDER;
use crate::error::{DriverError, ErrorClass};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

fn io_error(path: &str, what: &str, e: std::io::Error) -> DriverError {
    DriverError::new(ErrorClass::Io, format!("cannot read {what} {path}: {e}"))
}

/// Checks that `path` holds exactly `rows` x `width` values of 4 bytes.
fn check_size(path: &str, what: &str, rows: u64, width: u64) -> Result<File, DriverError> {
    let file = File::open(path).map_err(|e| io_error(path, what, e))?;
    let len = file.metadata().map_err(|e| io_error(path, what, e))?.len();
    let want = rows * width * 4;
    if len != want {
        return Err(DriverError::spec(format!(
            "{what} {path} has {len} bytes, not {want} ({rows} rows of {width} 4-byte values)"
        )));
    }
    Ok(file)
}

/// Reads a whole file of `rows` x `width` little-endian 4-byte values.
fn read_all(path: &str, what: &str, rows: u64, width: u64) -> Result<Vec<[u8; 4]>, DriverError> {
    let mut file = check_size(path, what, rows, width)?;
    let mut bytes = Vec::with_capacity((rows * width * 4) as usize);
    file.read_to_end(&mut bytes).map_err(|e| io_error(path, what, e))?;
    Ok(bytes.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect())
}

pub fn read_f32(path: &str, what: &str, rows: u64, dim: u64) -> Result<Vec<f32>, DriverError> {
    Ok(read_all(path, what, rows, dim)?.into_iter().map(f32::from_le_bytes).collect())
}

pub fn read_i32(path: &str, what: &str, rows: u64, width: u64) -> Result<Vec<i32>, DriverError> {
    Ok(read_all(path, what, rows, width)?.into_iter().map(i32::from_le_bytes).collect())
}

/// Rows `first..first + count` of a vectors file, read in blocks as a loader asks for them.
pub struct RowReader {
    file: File,
    dim: usize,
    left: u64,
    block: Vec<u8>,
}

impl RowReader {
    pub fn open(path: &str, rows: u64, dim: u64, first: u64, count: u64) -> Result<Self, DriverError> {
        let mut file = check_size(path, "vectors", rows, dim)?;
        file.seek(SeekFrom::Start(first * dim * 4))
            .map_err(|e| io_error(path, "vectors", e))?;
        Ok(RowReader { file, dim: dim as usize, left: count, block: Vec::new() })
    }

    /// The next up to `n` rows, as float32 values row after row; empty at the end.
    pub fn next_rows(&mut self, n: u64) -> Result<Vec<f32>, DriverError> {
        let n = n.min(self.left);
        self.block.resize(n as usize * self.dim * 4, 0);
        self.file
            .read_exact(&mut self.block)
            .map_err(|e| DriverError::new(ErrorClass::Io, format!("cannot read vectors: {e}")))?;
        self.left -= n;
        Ok(self.block.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }
}

/// Appends `[x,y,...]`.
pub fn push_literal(out: &mut String, v: &[f32]) {
    use std::fmt::Write;
    out.push('[');
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        // Display of f32 is the shortest text that parses back to the same float32.
        let _ = write!(out, "{x}");
    }
    out.push(']');
}

/// `template` with `$VECTOR` replaced by the vector's text.
pub fn with_vector(template: &str, v: &[f32]) -> String {
    let mut literal = String::with_capacity(v.len() * 12 + 2);
    push_literal(&mut literal, v);
    template.replace(PLACEHOLDER, &literal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_literal_reads_back_as_the_same_float32_values() {
        let v = [0.1f32, -1.0e-7, 3.0, 0.333_333_34, f32::MIN_POSITIVE];
        let mut s = String::new();
        push_literal(&mut s, &v);
        assert!(s.starts_with("[0.1,-0.0000001,3,") && s.ends_with(']'), "{s}");
        let back: Vec<f32> = s[1..s.len() - 1].split(',').map(|x| x.parse().unwrap()).collect();
        assert_eq!(back, v);
    }

    #[test]
    fn the_placeholder_is_replaced_wherever_the_template_puts_it() {
        assert_eq!(with_vector("VEC_FromText('$VECTOR')", &[1.0, 2.5]), "VEC_FromText('[1,2.5]')");
    }

    #[test]
    fn files_of_the_wrong_size_are_refused_and_rows_are_read_from_where_asked() {
        let dir = std::env::temp_dir().join(format!("dbdrift-vector-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("base.f32");
        let values: Vec<u8> = (0..12).flat_map(|i| (i as f32).to_le_bytes()).collect();
        std::fs::write(&path, &values).unwrap();
        let p = path.to_str().unwrap();
        assert_eq!(read_f32(p, "vectors", 3, 4).unwrap()[5], 5.0);
        let e = read_f32(p, "vectors", 4, 4).unwrap_err();
        assert!(e.message.contains("48 bytes, not 64"), "{}", e.message);
        let mut r = RowReader::open(p, 3, 4, 1, 2).unwrap();
        assert_eq!(r.next_rows(1).unwrap(), vec![4.0, 5.0, 6.0, 7.0]);
        assert_eq!(r.next_rows(5).unwrap(), vec![8.0, 9.0, 10.0, 11.0]);
        assert!(r.next_rows(5).unwrap().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
