//! NumPy `.npy` and `.npz` reading through the `npyz` crate.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use ndarray::{ArrayD, IxDyn};
use npyz::{DType, NpyFile, Order, TypeChar};

use super::{NumArray, format_error, io_error};
use crate::error::Result;

/// Reads a `.npy` file (float32/float64, signed/unsigned integers of any width, bool; C or
/// Fortran order, either endianness). Fortran-ordered data are transposed explicitly into
/// row-major layout, so the logical array is exactly what NumPy shows.
pub fn read_npy(path: &Path) -> Result<NumArray> {
    let file = File::open(path).map_err(|e| io_error(path, e))?;
    let file_len = file.metadata().map_err(|e| io_error(path, e))?.len();
    let npy =
        NpyFile::new(BufReader::new(file)).map_err(|e| format_error(path, format!("not a valid .npy file: {e}")))?;
    decode(npy, path, "", file_len)
}

/// Reads one member of a `.npz` archive (stored or deflate-compressed, as written by
/// `numpy.savez` and `numpy.savez_compressed`); with `member = None` the archive must hold
/// exactly one array.
pub fn read_npz(path: &Path, member: Option<&str>) -> Result<NumArray> {
    let file = File::open(path).map_err(|e| io_error(path, e))?;
    let mut archive = zip::ZipArchive::new(BufReader::new(file))
        .map_err(|e| format_error(path, format!("not a valid .npz archive: {e}")))?;
    let mut names: Vec<String> = archive
        .file_names()
        .filter_map(|f| f.ok())
        .filter_map(|f| npyz::npz::array_name_from_file_name(&f).map(str::to_owned))
        .collect();
    names.sort();
    let name = match member {
        Some(m) => m.to_owned(),
        None if names.len() == 1 => names[0].clone(),
        None => {
            return Err(format_error(
                path,
                format!("holds {} arrays {names:?}: name one as {}:NAME", names.len(), path.display()),
            ));
        }
    };
    let entry = match archive.by_name(&npyz::npz::file_name_from_array_name(&name)) {
        Ok(entry) => entry,
        Err(zip::result::ZipError::FileNotFound) => {
            return Err(format_error(path, format!("no array named '{name}' (arrays: {names:?})")));
        }
        Err(e) => return Err(format_error(path, format!("cannot read array '{name}': {e}"))),
    };
    let member_len = entry.size();
    let npy =
        NpyFile::new(entry).map_err(|e| format_error(path, format!("array '{name}' is not a valid .npy: {e}")))?;
    decode(npy, path, &name, member_len)
}

/// Decodes the data of an opened `.npy` stream; `stored` is the size in bytes of the whole
/// `.npy` (file or archive member), which bounds what the header may promise.
fn decode<R: Read>(npy: NpyFile<R>, path: &Path, member: &str, stored: u64) -> Result<NumArray> {
    let at = if member.is_empty() { String::new() } else { format!("array '{member}': ") };
    let shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
    let order = npy.order();
    let DType::Plain(ts) = npy.dtype() else {
        return Err(format_error(
            path,
            format!("{at}structured dtypes are not supported: expected a plain numeric array"),
        ));
    };
    // A header may claim any shape; never allocate more than the file can hold.
    let values = shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d as u64));
    let bytes = values.and_then(|v| v.checked_mul(ts.size_field()));
    if bytes.is_none_or(|b| b > stored) {
        return Err(format_error(
            path,
            format!("{at}header shape {shape:?} of '{ts}' needs more data than the {stored} bytes stored"),
        ));
    }
    // What the array will hold in memory (integers widen to i64; Fortran order is transposed
    // into a second buffer), refused by name beyond the memory that may be used.
    let in_memory: u128 = if ts.type_char() == TypeChar::Float { u128::from(ts.size_field()) } else { 8 };
    let copies = if order == Order::Fortran { 2 } else { 1 };
    crate::limits::memory("values", values.unwrap_or(0), in_memory * copies, 0, "values of the array")
        .map_err(|e| format_error(path, format!("{at}{e}")))?;
    let bad = |e: std::io::Error| format_error(path, format!("{at}cannot read data: {e}"));
    let dtype = |e: npyz::DTypeError| format_error(path, format!("{at}cannot read data: {e}"));
    // Floats, the large arrays, are read in bulk; everything else element by element.
    macro_rules! floats {
        ($t:ty, $bits:ty, $variant:ident) => {{
            let n = values.unwrap_or(0) as usize;
            let v = read_bulk::<$t, _>(npy.into_inner(), n, ts.endianness(), <$t>::from_bits, <$bits>::swap_bytes)
                .map_err(bad)?;
            return Ok(NumArray::$variant(build(v, &shape, order, path, &at)?));
        }};
    }
    match (ts.type_char(), ts.size_field()) {
        (TypeChar::Float, 4) => floats!(f32, u32, F32),
        (TypeChar::Float, 8) => floats!(f64, u64, F64),
        _ => {}
    }
    let n = values.unwrap_or(0) as usize;
    macro_rules! ints {
        ($t:ty) => {
            NumArray::I64(build(
                collect(npy.data::<$t>().map_err(dtype)?, n, |v| v as i64).map_err(bad)?,
                &shape,
                order,
                path,
                &at,
            )?)
        };
    }
    Ok(match (ts.type_char(), ts.size_field()) {
        (TypeChar::Int, 1) => ints!(i8),
        (TypeChar::Int, 2) => ints!(i16),
        (TypeChar::Int, 4) => ints!(i32),
        (TypeChar::Int, 8) => ints!(i64),
        (TypeChar::Uint, 1) => ints!(u8),
        (TypeChar::Uint, 2) => ints!(u16),
        (TypeChar::Uint, 4) => ints!(u32),
        (TypeChar::Uint, 8) => {
            let v = collect(npy.data::<u64>().map_err(dtype)?, n, |x| x).map_err(bad)?;
            if let Some(i) = v.iter().position(|&x| x > i64::MAX as u64) {
                return Err(format_error(
                    path,
                    format!("{at}element {i} = {} exceeds the supported integer range", v[i]),
                ));
            }
            NumArray::I64(build(v.into_iter().map(|x| x as i64).collect(), &shape, order, path, &at)?)
        }
        (TypeChar::Bool, 1) => NumArray::I64(build(
            collect(npy.data::<bool>().map_err(dtype)?, n, i64::from).map_err(bad)?,
            &shape,
            order,
            path,
            &at,
        )?),
        _ => {
            return Err(format_error(
                path,
                format!("{at}unsupported dtype '{ts}': expected float32, float64, integer or bool"),
            ));
        }
    })
}

/// A buffer of `n` values, or an error (not an abort) where the allocation fails, e.g. under a
/// process memory limit the memory check cannot see.
fn buffer<T>(n: usize) -> std::io::Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!("{n} values do not fit in the memory this process may use ({e})"),
        )
    })?;
    Ok(v)
}

/// The `n` values of `data`, each through `f`, in a buffer from [`buffer`].
fn collect<T, U>(
    data: impl Iterator<Item = std::io::Result<T>>,
    n: usize,
    f: impl Fn(T) -> U,
) -> std::io::Result<Vec<U>> {
    let mut v = buffer(n)?;
    for x in data {
        v.push(f(x?));
    }
    Ok(v)
}

/// Reads `n` floats stored contiguously straight into their final buffer, swapping bytes when
/// the file's byte order differs from this machine's (about 5x faster than element by element).
fn read_bulk<T: bytemuck::Pod + Default, B: bytemuck::Pod>(
    mut reader: impl Read,
    n: usize,
    endianness: npyz::Endianness,
    from_bits: fn(B) -> T,
    swap: fn(B) -> B,
) -> std::io::Result<Vec<T>> {
    let mut v = buffer(n)?;
    v.resize(n, T::default());
    reader.read_exact(bytemuck::cast_slice_mut(&mut v)).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => {
            std::io::Error::new(e.kind(), format!("the file ends before the {n} values the header promises"))
        }
        _ => e,
    })?;
    let native = if cfg!(target_endian = "little") { npyz::Endianness::Little } else { npyz::Endianness::Big };
    if endianness != native && endianness != npyz::Endianness::Irrelevant {
        for x in &mut v {
            *x = from_bits(swap(bytemuck::cast(*x)));
        }
    }
    Ok(v)
}

/// Shapes flat data; Fortran order is read as the reversed shape, then transposed.
fn build<T: Clone>(data: Vec<T>, shape: &[usize], order: Order, path: &Path, at: &str) -> Result<ArrayD<T>> {
    let mismatch = |_| format_error(path, format!("{at}data length does not match the header shape {shape:?}"));
    match order {
        Order::C => ArrayD::from_shape_vec(IxDyn(shape), data).map_err(mismatch),
        Order::Fortran => {
            let reversed: Vec<usize> = shape.iter().rev().copied().collect();
            let a = ArrayD::from_shape_vec(IxDyn(&reversed), data).map_err(mismatch)?;
            Ok(a.reversed_axes().as_standard_layout().into_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Writes a raw .npy (version 1.0) with the given header dict and little-endian payload.
    pub(crate) fn write_raw_npy(path: &Path, descr: &str, fortran: bool, shape: &str, payload: &[u8]) {
        let dict = format!(
            "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
            if fortran { "True" } else { "False" }
        );
        let mut header = dict.into_bytes();
        let total = 10 + header.len() + 1;
        header.extend(std::iter::repeat_n(b' ', (64 - total % 64) % 64));
        header.push(b'\n');
        let mut f = File::create(path).unwrap();
        f.write_all(b"\x93NUMPY\x01\x00").unwrap();
        f.write_all(&(header.len() as u16).to_le_bytes()).unwrap();
        f.write_all(&header).unwrap();
        f.write_all(payload).unwrap();
    }

    #[test]
    fn reads_dtypes_and_fortran_order() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.npy");
        // [[1, 2, 3], [4, 5, 6]] in Fortran order is stored column by column: 1 4 2 5 3 6.
        let payload: Vec<u8> = [1.0f64, 4.0, 2.0, 5.0, 3.0, 6.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        write_raw_npy(&p, "<f8", true, "(2, 3)", &payload);
        let NumArray::F64(a) = read_npy(&p).unwrap() else { panic!("expected f64") };
        assert_eq!(a, ndarray::array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]].into_dyn());
        assert!(a.is_standard_layout());

        let payload: Vec<u8> = [3i32, -1].iter().flat_map(|v| v.to_le_bytes()).collect();
        write_raw_npy(&p, "<i4", false, "(2,)", &payload);
        assert_eq!(read_npy(&p).unwrap(), NumArray::I64(ndarray::array![3, -1].into_dyn()));

        let payload: Vec<u8> = [0.5f32].iter().flat_map(|v| v.to_be_bytes()).collect();
        write_raw_npy(&p, ">f4", false, "(1,)", &payload);
        assert_eq!(read_npy(&p).unwrap(), NumArray::F32(ndarray::array![0.5f32].into_dyn()));
    }

    #[test]
    fn bad_files_name_the_file_and_problem() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.npy");
        write_raw_npy(&p, "<c16", false, "(1,)", &[0u8; 16]);
        let e = read_npy(&p).unwrap_err().to_string();
        assert!(e.contains("c.npy") && e.contains("unsupported dtype"), "{e}");

        write_raw_npy(&p, "<f8", false, "(4,)", &[0u8; 16]);
        let e = read_npy(&p).unwrap_err().to_string();
        assert!(e.contains("c.npy") && e.contains("the file ends before"), "{e}");
        // A header promising an absurd shape is refused before anything is allocated.
        write_raw_npy(&p, "<f4", false, "(100000000000, 100000)", &[0u8; 16]);
        assert!(read_npy(&p).unwrap_err().to_string().contains("needs more data"));
        write_raw_npy(&p, "<i4", false, "(4,)", &[0u8; 8]);
        assert!(read_npy(&p).unwrap_err().to_string().contains("cannot read data"));

        std::fs::write(&p, b"not numpy").unwrap();
        assert!(read_npy(&p).unwrap_err().to_string().contains("not a valid .npy"));
        let missing = dir.path().join("missing.npy");
        assert!(read_npy(&missing).unwrap_err().to_string().contains("missing.npy"));
    }

    #[test]
    fn npz_members_by_name_stored_and_deflated() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("z.npz");
        let npy = |descr: &str, shape: &str, payload: &[u8]| {
            let tmp = dir.path().join("member.npy");
            write_raw_npy(&tmp, descr, false, shape, payload);
            std::fs::read(tmp).unwrap()
        };
        let probs = npy("<f8", "(2,)", &[0.25f64, 0.75].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>());
        let labels = npy("<i8", "(1,)", &1i64.to_le_bytes());
        let mut w = zip::ZipWriter::new(File::create(&p).unwrap());
        let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        w.start_file("probs.npy", stored).unwrap();
        w.write_all(&probs).unwrap();
        let deflated = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        w.start_file("labels.npy", deflated).unwrap();
        w.write_all(&labels).unwrap();
        w.finish().unwrap();
        assert_eq!(read_npz(&p, Some("labels")).unwrap(), NumArray::I64(ndarray::array![1].into_dyn()));
        assert_eq!(read_npz(&p, Some("probs")).unwrap(), NumArray::F64(ndarray::array![0.25, 0.75].into_dyn()));
        let e = read_npz(&p, None).unwrap_err().to_string();
        assert!(e.contains("holds 2 arrays"), "{e}");
        assert!(read_npz(&p, Some("nope")).unwrap_err().to_string().contains("no array named 'nope'"));
        std::fs::write(&p, b"PK broken").unwrap();
        assert!(read_npz(&p, None).unwrap_err().to_string().contains("not a valid .npz"));
    }
}
