/**
 * Text for the PDF's standard fonts (Helvetica), which encode WinAnsi only: any other character would make
 * pdf-lib throw while drawing. So every string is mapped first: ₹ becomes "Rs. ", typographic look-alikes
 * their ASCII twin, a letter with an accent WinAnsi lacks its bare letter (ő → o), and whatever is left (a
 * shopper's name in Devanagari, an emoji) one "?" per character. Never throws.
 */

// Code points WinAnsi has beyond ASCII and Latin-1 (its 0x80–0x9F block).
const WIN_ANSI_EXTRA = new Set([
  0x20ac, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0x017d, 0x2018, 0x2019,
  0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0x017e, 0x0178,
]);

const LOOK_ALIKES: Readonly<Record<string, string>> = {
  "\u00a0": " ", "\u202f": " ", "\u2007": " ", "\u2009": " ", "\u2002": " ", "\u2003": " ",
  "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2212": "-", "\u2032": "'", "\u2033": '"',
};

const encodable = (cp: number) => (cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa1 && cp <= 0xff && cp !== 0xad) || WIN_ANSI_EXTRA.has(cp);

/** The text with only characters Helvetica can draw. */
export function toWinAnsi(text: string): string {
  let out = "";
  for (const ch of text.normalize("NFC").replace(/₹\s*/g, "Rs. ")) {
    const cp = ch.codePointAt(0)!;
    if (encodable(cp)) out += ch;
    else if (LOOK_ALIKES[ch] !== undefined) out += LOOK_ALIKES[ch];
    else if (/[\s\p{Cc}]/u.test(ch)) out += " ";
    else if (/[\p{M}\p{Cf}]/u.test(ch)) continue; // a mark or joiner alone: its base already printed (or a "?")
    else {
      const bare = ch.normalize("NFKD").replace(/\p{M}/gu, "");
      out += bare && [...bare].every((c) => encodable(c.codePointAt(0)!)) ? bare : "?";
    }
  }
  return out;
}
