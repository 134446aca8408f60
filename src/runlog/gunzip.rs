//! gzip decompression that names what it finds after the data: more members are read on, zero
//! padding (as tape and block devices leave) is ignored as gzip ignores it, and anything else
//! is trailing junk, named as such rather than called a truncated file.

use std::io::{BufRead, Read};

use flate2::bufread::GzDecoder;

pub(crate) const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// What was found after a complete gzip member, when it is not more gzip data.
#[derive(Debug)]
struct TrailingJunk;

impl std::fmt::Display for TrailingJunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("trailing junk after the gzip data")
    }
}

impl std::error::Error for TrailingJunk {}

/// The message for a read error that is a known gzip problem (not corruption).
pub(crate) fn gzip_problem(e: &std::io::Error) -> Option<String> {
    e.get_ref()?.downcast_ref::<TrailingJunk>()?;
    Some(
        "complete gzip data followed by bytes that are neither gzip nor zero padding \
         (trailing junk); expected only gzip data: remove what follows the compressed \
         stream, or decompress it with gzip -dc (which warns and ignores it) and read the \
         result"
            .to_string(),
    )
}

/// Every member of a gzip stream, decompressed in turn.
pub(crate) struct Gunzip<R: BufRead> {
    member: Option<GzDecoder<R>>,
}

impl<R: BufRead> Gunzip<R> {
    pub(crate) fn new(reader: R) -> Self {
        Gunzip {
            member: Some(GzDecoder::new(reader)),
        }
    }
}

impl<R: BufRead> Read for Gunzip<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let Some(member) = &mut self.member else {
                return Ok(0);
            };
            let n = member.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            let mut rest = self.member.take().expect("checked above").into_inner();
            let next = rest.fill_buf()?;
            if next.is_empty() {
                return Ok(0);
            }
            if next[0] == GZIP_MAGIC[0] {
                // Another member (or, if its header is wrong, corrupt data said as such).
                self.member = Some(GzDecoder::new(rest));
                continue;
            }
            skip_zero_padding(&mut rest)?;
            return Ok(0);
        }
    }
}

/// Read to the end: zeros only, or an error naming the junk.
fn skip_zero_padding<R: BufRead>(reader: &mut R) -> std::io::Result<()> {
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        if buf.iter().any(|&b| b != 0) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                TrailingJunk,
            ));
        }
        let n = buf.len();
        reader.consume(n);
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn gzip(body: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(body).unwrap();
        encoder.finish().unwrap()
    }

    fn gunzip(data: &[u8]) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        Gunzip::new(data).read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn members_padding_and_junk() {
        let two = [gzip(b"a\n"), gzip(b"b\n")].concat();
        assert_eq!(gunzip(&two).unwrap(), b"a\nb\n");
        let padded = [gzip(b"a\n"), vec![0; 1000]].concat();
        assert_eq!(gunzip(&padded).unwrap(), b"a\n");
        let junk = [gzip(b"a\n"), b"junk".to_vec()].concat();
        let err = gunzip(&junk).unwrap_err();
        assert!(gzip_problem(&err).unwrap().contains("trailing junk"));
        let mut cut = gzip(b"a\nb\nc\n");
        cut.truncate(cut.len() - 3);
        let err = gunzip(&cut).unwrap_err();
        assert!(gzip_problem(&err).is_none());
    }
}
