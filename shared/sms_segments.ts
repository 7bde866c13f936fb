/** The GSM 03.38 default alphabet: one septet each. */
const GSM_BASIC = new Set(
  "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà",
);
/** The GSM 03.38 extension table: an escape plus one septet, so two each. */
const GSM_EXTENDED = new Set("\f^{}\\[~]|€");

/** How an SMS text travels and what it is billed as. */
export interface SmsSegmentation {
  /** GSM-7 when every character is in the GSM alphabet, else UCS-2. */
  encoding: "GSM-7" | "UCS-2";
  /** Septets (GSM-7) or UTF-16 code units (UCS-2). */
  units: number;
  /** Parts the text is sent (and billed) as; at least 1. */
  segments: number;
}

/**
 * Splits an SMS into segments as carriers do: GSM-7 holds 160 septets in one segment, 153 in each
 * part of a longer message; any other character makes it UCS-2, 70 code units alone or 67 a part.
 * A two-septet character (an escape) or a surrogate pair is never cut across two parts.
 */
export function smsSegments(text: string): SmsSegmentation {
  const gsm = gsmSeptets(text);
  if (gsm) return { encoding: "GSM-7", units: total(gsm), segments: pack(gsm, 160, 153) };
  const units = [...text].map((ch) => ch.length);
  return { encoding: "UCS-2", units: total(units), segments: pack(units, 70, 67) };
}

/** Septets of each character, or undefined when a character is outside the GSM alphabet. */
function gsmSeptets(text: string): number[] | undefined {
  const septets: number[] = [];
  for (const ch of text) {
    if (GSM_BASIC.has(ch)) septets.push(1);
    else if (GSM_EXTENDED.has(ch)) septets.push(2);
    else return undefined;
  }
  return septets;
}

function total(sizes: number[]): number {
  return sizes.reduce((sum, n) => sum + n, 0);
}

/** Parts needed for characters of `sizes`: one if all fit `single`, else greedy parts of `part`. */
function pack(sizes: number[], single: number, part: number): number {
  if (total(sizes) <= single) return 1;
  let parts = 1;
  let used = 0;
  for (const size of sizes) {
    if (used + size > part) {
      parts++;
      used = 0;
    }
    used += size;
  }
  return parts;
}
