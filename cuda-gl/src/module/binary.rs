//! Checks of a cubin or fatbin image before `cuModuleLoadDataEx` reads it.
//!
//! `cuModuleLoadDataEx` takes no length: it finds the end of an ELF image from its section and
//! program headers, the end of a fatbin from its header and entries, and reads anything else as
//! NUL-terminated text. An image whose headers point past the end of the slice would make the
//! driver read memory that is not the caller's, so the checks here run first.

/// `\x7fELF`.
const ELF_MAGIC: [u8; 4] = [0x7f, b'E', b'L', b'F'];
/// The size of an ELF64 file header.
const ELF64_HEADER: usize = 64;
/// The size of an ELF64 section header.
const ELF64_SECTION_HEADER: usize = 64;
/// The size of an ELF64 program header.
const ELF64_PROGRAM_HEADER: usize = 56;
/// The size of an ELF64 symbol.
const ELF64_SYMBOL: usize = 24;
/// `SHT_SYMTAB`: a symbol table.
const SHT_SYMTAB: u32 = 2;
/// `SHT_STRTAB`: a string table.
const SHT_STRTAB: u32 = 3;
/// `SHT_NOBITS`: a section that occupies no bytes of the file (`.bss`, `.nv.shared.*`).
const SHT_NOBITS: u32 = 8;
/// The magic of a fatbin's header (`fatBinaryHeader::magic` in NVIDIA's `fatbinary_section.h`).
const FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// The magic of the host-side wrapper (`__fatBinC_Wrapper_t`) that points to a fatbin.
const FATBIN_WRAPPER_MAGIC: u32 = 0x4662_43B1;
/// The size of a fatbin's header: magic, version, header size, fat size.
const FATBIN_HEADER: usize = 16;
/// The size of the fixed part of a fatbin entry's header, which the driver reads whatever the
/// entry's stated header size: kind, version, header size, payload size, compressed size,
/// architecture, name offset and length, flags and sizes.
const FATBIN_ENTRY_HEADER: usize = 64;

/// Checks that `image` is a module whose every byte the driver reads lies within the slice.
///
/// `cuModuleLoadDataEx` takes no length: it finds the end of an ELF image from its section and
/// program headers, the end of a fatbin from its header and entries, and reads anything else as
/// NUL-terminated text. So an image is accepted only when it is a little-endian ELF64 (a cubin)
/// whose header tables, sections (other than `SHT_NOBITS`), segments and string tables lie within
/// the slice, or a fatbin whose header and every entry lie within it. The contents of sections
/// and of fatbin payloads are the driver's to validate. Returns what is wrong and what to do.
pub(super) fn check_module_image(image: &[u8]) -> std::result::Result<(), String> {
    if image.is_empty() {
        return Err("the image is empty; pass the bytes of a .cubin or .fatbin file".into());
    }
    if image.starts_with(&ELF_MAGIC) {
        return check_elf(image);
    }
    match read_u32(image, 0) {
        Some(FATBIN_MAGIC) => return check_fatbin(image),
        Some(FATBIN_WRAPPER_MAGIC) => {
            return Err(
                "the image is a host-side fatbin wrapper (magic 0x466243b1), which holds \
                        pointers, not the fatbin; pass the fatbin itself (the bytes of a .fatbin \
                        file, magic 0xba55ed50)"
                    .into(),
            );
        }
        _ => {}
    }
    if std::str::from_utf8(image).is_ok_and(|t| t.contains(".version") || t.contains(".target")) {
        return Err("the image is PTX text; load it with Module::from_ptx".into());
    }
    Err(format!(
        "the image is neither a cubin (ELF, magic 7f 45 4c 46) nor a fatbin (magic 0xba55ed50); \
         it starts with {:02x?}. Pass the bytes of a .cubin or .fatbin file (nvcc -cubin, nvcc \
         -fatbin), or load PTX text with Module::from_ptx",
        &image[..image.len().min(8)]
    ))
}

/// The ELF checks of [`check_module_image`].
fn check_elf(image: &[u8]) -> std::result::Result<(), String> {
    const EI_CLASS: usize = 4;
    const EI_DATA: usize = 5;
    if image.len() < ELF64_HEADER {
        return Err(format!(
            "the ELF image is truncated: {} bytes, shorter than the 64-byte ELF64 header",
            image.len()
        ));
    }
    if image[EI_CLASS] != 2 || image[EI_DATA] != 1 {
        return Err(format!(
            "the ELF image is not 64-bit little-endian (class {}, data {}), as every cubin is; \
             build the module for a 64-bit target (nvcc -cubin -m64)",
            image[EI_CLASS], image[EI_DATA]
        ));
    }
    let header = |at| read_u16(image, at).map(usize::from).unwrap_or_default();
    let (phoff, shoff) = (read_u64(image, 0x20), read_u64(image, 0x28));
    let (phentsize, phnum) = (header(0x36), header(0x38));
    let (shentsize, shnum, shstrndx) = (header(0x3a), header(0x3c), header(0x3e));
    if header(0x34) < ELF64_HEADER {
        return Err(
            "the ELF header states a header size below 64 bytes; the image is corrupt \
                    or not a cubin"
                .into(),
        );
    }
    if phnum > 0 {
        let table = table(
            image,
            phoff,
            phentsize,
            phnum,
            ELF64_PROGRAM_HEADER,
            "program",
        )?;
        for entry in table {
            // p_offset and p_filesz.
            within(
                image,
                read_u64(entry, 0x08),
                read_u64(entry, 0x20),
                "a segment",
            )?;
        }
    }
    if shnum == 0 {
        if shoff.is_some_and(|o| o != 0) {
            return Err(
                "the ELF image uses extended section numbering (more than 65279 \
                        sections), which a cubin never needs; the image is corrupt or not a \
                        cubin"
                    .into(),
            );
        }
        return Ok(());
    }
    let sections: Vec<&[u8]> = table(
        image,
        shoff,
        shentsize,
        shnum,
        ELF64_SECTION_HEADER,
        "section",
    )?
    .collect();
    // Each section's bytes, `None` for SHT_NOBITS, and its type.
    let mut contents = Vec::with_capacity(sections.len());
    for (i, section) in sections.iter().enumerate() {
        let kind = read_u32(section, 0x04).unwrap_or_default();
        if kind == SHT_NOBITS {
            contents.push((kind, None));
            continue;
        }
        // sh_offset and sh_size.
        let (offset, size) = (read_u64(section, 0x18), read_u64(section, 0x20));
        let bytes = within(image, offset, size, "a section")?;
        if kind == SHT_STRTAB && bytes.last().is_some_and(|&b| b != 0) {
            return Err(format!(
                "string table section {i} does not end with a NUL byte, so reading its last \
                 string would run past it; the image is corrupt"
            ));
        }
        contents.push((kind, Some(bytes)));
    }
    // The length of string table `index`, the only kind of section whose strings stay within it.
    let strings = |index: usize| match contents.get(index) {
        Some(&(SHT_STRTAB, Some(bytes))) => Some(bytes.len()),
        _ => None,
    };
    // Section index 0 (SHN_UNDEF) means the sections have no names.
    let names_len = if shstrndx == 0 {
        Some(0)
    } else {
        strings(shstrndx)
    };
    let Some(names_len) = names_len else {
        return Err(format!(
            "the ELF header names section {shstrndx} as the section-name table, but the image \
             has no string table there; the image is corrupt"
        ));
    };
    for (i, (section, &(kind, bytes))) in sections.iter().zip(&contents).enumerate() {
        let name = read_u32(section, 0).map_or(usize::MAX, |n| n as usize);
        if name != 0 && name >= names_len {
            return Err(format!(
                "the name of section {i} lies outside the section-name table; the image is \
                 corrupt"
            ));
        }
        if kind == SHT_SYMTAB {
            // sh_link: the string table of the symbols' names.
            let link = read_u32(section, 0x28).map_or(usize::MAX, |l| l as usize);
            check_symbols(i, bytes.unwrap_or_default(), strings(link))?;
        }
    }
    Ok(())
}

/// Checks that every symbol of symbol table `index` names a string within its string table,
/// whose length is `strings` (`None` when the table links to no string table).
fn check_symbols(
    index: usize,
    symbols: &[u8],
    strings: Option<usize>,
) -> std::result::Result<(), String> {
    let corrupt = |what: &str| {
        Err(format!(
            "symbol table section {index} {what}; the image is corrupt"
        ))
    };
    let Some(strings) = strings else {
        return corrupt("links to no string table");
    };
    if !symbols.len().is_multiple_of(ELF64_SYMBOL) {
        return corrupt("is not a whole number of 24-byte ELF64 symbols");
    }
    for symbol in symbols.chunks_exact(ELF64_SYMBOL) {
        // st_name.
        let name = read_u32(symbol, 0).map_or(usize::MAX, |n| n as usize);
        if name != 0 && name >= strings {
            return corrupt("has a symbol whose name lies outside its string table");
        }
    }
    Ok(())
}

/// The `count` entries of `size` bytes each (at least `min` bytes, as the format needs) of an
/// ELF header table at `offset`, once they are known to lie within `image`.
fn table<'a>(
    image: &'a [u8],
    offset: Option<u64>,
    size: usize,
    count: usize,
    min: usize,
    what: &str,
) -> std::result::Result<impl Iterator<Item = &'a [u8]>, String> {
    if size < min {
        return Err(format!(
            "the ELF header states {size}-byte {what} headers, below the {min} bytes of ELF64; \
             the image is corrupt"
        ));
    }
    let bytes = within(
        image,
        offset,
        size.checked_mul(count).and_then(|n| u64::try_from(n).ok()),
        &format!("the {what}-header table"),
    )?;
    Ok(bytes.chunks_exact(size))
}

/// `image[offset..offset + len]`, or what is wrong when that range is not within the image.
fn within<'a>(
    image: &'a [u8],
    offset: Option<u64>,
    len: Option<u64>,
    what: &str,
) -> std::result::Result<&'a [u8], String> {
    offset
        .zip(len)
        .and_then(|(o, l)| {
            let start = usize::try_from(o).ok()?;
            let end = start.checked_add(usize::try_from(l).ok()?)?;
            image.get(start..end)
        })
        .ok_or_else(|| {
            format!(
                "{what} reaches past the end of the {}-byte image (or its header is cut off): \
                 the image is truncated or corrupt; pass the whole .cubin or .fatbin file",
                image.len()
            )
        })
}

/// The fatbin checks of [`check_module_image`]: the header, then each entry (a header stating
/// its own size and its payload's, then the payload), which must tile the stated size exactly.
fn check_fatbin(image: &[u8]) -> std::result::Result<(), String> {
    if image.len() < FATBIN_HEADER {
        return Err(format!(
            "the fatbin is truncated: {} bytes, shorter than its 16-byte header",
            image.len()
        ));
    }
    let version = read_u16(image, 4).unwrap_or_default();
    let header_size = read_u16(image, 6).map(usize::from).unwrap_or_default();
    let fat_size = read_u64(image, 8);
    if version != 1 {
        return Err(format!(
            "the fatbin header states version {version}; only version 1 is known, so the image \
             is refused rather than read past its end"
        ));
    }
    if header_size < FATBIN_HEADER {
        return Err("the fatbin header states a size below 16 bytes; the image is corrupt".into());
    }
    let body = within(
        image,
        u64::try_from(header_size).ok(),
        fat_size,
        "the fatbin's contents",
    )?;
    if body.is_empty() {
        return Err("the fatbin holds no entries; rebuild it with nvcc -fatbin".into());
    }
    let mut rest = body;
    while !rest.is_empty() {
        let entry_header = read_u32(rest, 4).map(|h| h as usize);
        let Some(entry_header) = entry_header.filter(|&h| h >= FATBIN_ENTRY_HEADER) else {
            return Err(
                "a fatbin entry's header is truncated or states a size below 64 bytes; \
                        the image is truncated or corrupt"
                    .into(),
            );
        };
        let payload = read_u64(rest, 8).and_then(|p| usize::try_from(p).ok());
        let Some(next) = payload
            .and_then(|p| p.checked_add(entry_header))
            .filter(|&n| n <= rest.len())
        else {
            return Err(format!(
                "a fatbin entry reaches past the {} bytes that the fatbin header states; the \
                 image is truncated or corrupt",
                body.len()
            ));
        };
        rest = &rest[next..];
    }
    Ok(())
}

/// The little-endian `u16` at `at`, if the bytes are there.
fn read_u16(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        bytes.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

/// The little-endian `u32` at `at`, if the bytes are there.
fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        bytes.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

/// The little-endian `u64` at `at`, if the bytes are there.
fn read_u64(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        bytes.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    /// A minimal valid cubin-shaped ELF64: the header, a section-name table and a symbol table
    /// with one named symbol, then the three section headers (null, .shstrtab, .symtab) and
    /// one program header covering the tables.
    fn minimal_elf() -> Vec<u8> {
        let names = b"\0.shstrtab\0.symtab\0sym\0";
        let mut symbols = vec![0u8; 2 * ELF64_SYMBOL];
        // Symbol 1's name: "sym" at offset 19.
        symbols[ELF64_SYMBOL..ELF64_SYMBOL + 4].copy_from_slice(&19u32.to_le_bytes());
        let names_at = ELF64_HEADER;
        let symbols_at = names_at + names.len();
        let program_at = symbols_at + symbols.len();
        let sections_at = program_at + ELF64_PROGRAM_HEADER;
        let mut image = vec![0u8; sections_at + 3 * ELF64_SECTION_HEADER];
        image[..4].copy_from_slice(&ELF_MAGIC);
        image[4] = 2; // ELFCLASS64
        image[5] = 1; // ELFDATA2LSB
        image[6] = 1; // EV_CURRENT
        image[0x20..0x28].copy_from_slice(&(program_at as u64).to_le_bytes());
        image[0x28..0x30].copy_from_slice(&(sections_at as u64).to_le_bytes());
        image[0x34..0x36].copy_from_slice(&(ELF64_HEADER as u16).to_le_bytes());
        image[0x36..0x38].copy_from_slice(&(ELF64_PROGRAM_HEADER as u16).to_le_bytes());
        image[0x38..0x3a].copy_from_slice(&1u16.to_le_bytes());
        image[0x3a..0x3c].copy_from_slice(&(ELF64_SECTION_HEADER as u16).to_le_bytes());
        image[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
        image[0x3e..0x40].copy_from_slice(&1u16.to_le_bytes());
        image[names_at..symbols_at].copy_from_slice(names);
        image[symbols_at..program_at].copy_from_slice(&symbols);
        let program = &mut image[program_at..sections_at];
        program[0x08..0x10].copy_from_slice(&(names_at as u64).to_le_bytes());
        program[0x20..0x28].copy_from_slice(&((program_at - names_at) as u64).to_le_bytes());
        let mut section = |i: usize, name: u32, kind: u32, at: usize, size: usize, link: u32| {
            let h = &mut image[sections_at + i * ELF64_SECTION_HEADER..][..ELF64_SECTION_HEADER];
            h[..4].copy_from_slice(&name.to_le_bytes());
            h[4..8].copy_from_slice(&kind.to_le_bytes());
            h[0x18..0x20].copy_from_slice(&(at as u64).to_le_bytes());
            h[0x20..0x28].copy_from_slice(&(size as u64).to_le_bytes());
            h[0x28..0x2c].copy_from_slice(&link.to_le_bytes());
        };
        section(1, 1, SHT_STRTAB, names_at, names.len(), 0);
        section(2, 11, SHT_SYMTAB, symbols_at, symbols.len(), 1);
        image
    }

    /// A fatbin with one entry of a 64-byte header and an 8-byte payload.
    fn minimal_fatbin() -> Vec<u8> {
        let mut image = Vec::new();
        image.extend_from_slice(&FATBIN_MAGIC.to_le_bytes());
        image.extend_from_slice(&1u16.to_le_bytes());
        image.extend_from_slice(&(FATBIN_HEADER as u16).to_le_bytes());
        image.extend_from_slice(&72u64.to_le_bytes());
        let mut entry = [0u8; FATBIN_ENTRY_HEADER];
        entry[..2].copy_from_slice(&2u16.to_le_bytes()); // kind: ELF
        entry[4..8].copy_from_slice(&(FATBIN_ENTRY_HEADER as u32).to_le_bytes());
        entry[8..16].copy_from_slice(&8u64.to_le_bytes());
        image.extend_from_slice(&entry);
        image.extend_from_slice(&[0xAB; 8]);
        image
    }

    fn refused(image: &[u8]) -> String {
        match check_module_image(image) {
            Ok(()) => panic!(
                "accepted {} bytes: {:02x?}",
                image.len(),
                &image[..16.min(image.len())]
            ),
            Err(why) => why,
        }
    }

    #[test]
    fn accepts_a_minimal_elf_and_fatbin() {
        assert_eq!(check_module_image(&minimal_elf()), Ok(()));
        assert_eq!(check_module_image(&minimal_fatbin()), Ok(()));
    }

    #[test]
    fn refuses_junk_empty_and_ptx_with_what_to_do() {
        assert!(refused(b"").contains("empty"));
        let junk = refused(b"definitely not a module, and not NUL-terminated");
        assert!(
            junk.contains("neither a cubin") && junk.contains("from_ptx"),
            "{junk}"
        );
        let ptx = refused(b".version 8.0\n.target sm_75\n.address_size 64\n");
        assert!(ptx.contains("Module::from_ptx"), "{ptx}");
        assert!(refused(&0x4662_43B1u32.to_le_bytes()).contains("wrapper"));
    }

    #[test]
    fn refuses_every_truncation_of_an_elf() {
        refuses_every_truncation(&minimal_elf(), &["truncated", "past the end"]);
    }

    /// Every proper prefix of `image` is refused: under 4 bytes as neither format, longer ones
    /// with a reason that contains one of `reasons`.
    fn refuses_every_truncation(image: &[u8], reasons: &[&str]) {
        for len in 1..image.len() {
            let why = refused(&image[..len]);
            assert!(
                (len < 4 && why.contains("neither")) || reasons.iter().any(|r| why.contains(r)),
                "{len}: {why}"
            );
        }
    }

    #[test]
    fn refuses_elf_of_another_class_or_with_headers_out_of_bounds() {
        let mut elf32 = minimal_elf();
        elf32[4] = 1;
        assert!(refused(&elf32).contains("64-bit little-endian"));
        let mut big_endian = minimal_elf();
        big_endian[5] = 2;
        assert!(refused(&big_endian).contains("64-bit little-endian"));
        let sections_at = read_u64(&minimal_elf(), 0x28).unwrap() as usize;
        // A section whose offset + size overflows, then one just past the end.
        for (offset, size) in [(u64::MAX - 1, 4u64), (8, minimal_elf().len() as u64)] {
            let mut bad = minimal_elf();
            let h = &mut bad[sections_at + ELF64_SECTION_HEADER..];
            h[0x18..0x20].copy_from_slice(&offset.to_le_bytes());
            h[0x20..0x28].copy_from_slice(&size.to_le_bytes());
            assert!(refused(&bad).contains("past the end"));
        }
        // An SHT_NOBITS section may be larger than the file.
        let mut nobits = minimal_elf();
        let h = &mut nobits[sections_at + 2 * ELF64_SECTION_HEADER..];
        h[4..8].copy_from_slice(&SHT_NOBITS.to_le_bytes());
        h[0x20..0x28].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert_eq!(check_module_image(&nobits), Ok(()));
        // A section-header table that does not fit.
        let mut many = minimal_elf();
        many[0x3c..0x3e].copy_from_slice(&4u16.to_le_bytes());
        assert!(refused(&many).contains("section-header table"));
        // A section-name table index past the sections.
        let mut names = minimal_elf();
        names[0x3e..0x40].copy_from_slice(&7u16.to_le_bytes());
        assert!(refused(&names).contains("no string table"));
    }

    #[test]
    fn refuses_strings_that_would_run_past_their_table() {
        let elf = minimal_elf();
        let sections_at = read_u64(&elf, 0x28).unwrap() as usize;
        let mut unterminated = elf.clone();
        let names_end = ELF64_HEADER + b"\0.shstrtab\0.symtab\0sym\0".len();
        unterminated[names_end - 1] = b'x';
        assert!(refused(&unterminated).contains("NUL"));
        let mut section_name = elf.clone();
        section_name[sections_at + ELF64_SECTION_HEADER..][..4]
            .copy_from_slice(&1000u32.to_le_bytes());
        assert!(refused(&section_name).contains("section-name table"));
        let mut symbol_name = elf;
        symbol_name[names_end + ELF64_SYMBOL..][..4].copy_from_slice(&1000u32.to_le_bytes());
        assert!(refused(&symbol_name).contains("outside its string table"));
    }

    #[test]
    fn refuses_every_truncation_of_a_fatbin_and_entries_past_its_end() {
        refuses_every_truncation(&minimal_fatbin(), &["truncated", "past the end", "cut off"]);
        let mut long_entry = minimal_fatbin();
        long_entry[FATBIN_HEADER + 8..][..8].copy_from_slice(&9u64.to_le_bytes());
        assert!(refused(&long_entry).contains("entry reaches past"));
        let mut huge_entry = minimal_fatbin();
        huge_entry[FATBIN_HEADER + 8..][..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(refused(&huge_entry).contains("entry reaches past"));
        let mut huge_fat = minimal_fatbin();
        huge_fat[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(refused(&huge_fat).contains("past the end"));
        let mut version = minimal_fatbin();
        version[4] = 2;
        assert!(refused(&version).contains("version"));
    }
}
