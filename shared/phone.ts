/** E.164: a plus sign, a non-zero digit, then up to 14 more digits. */
const E164 = /^\+[1-9]\d{1,14}$/;

/** True when `s` is a phone number in E.164 format (`+14155550123`). */
export function isE164(s: string): boolean {
  return E164.test(s);
}

/**
 * The E.164 number a contact's `custom_fields.phone` holds: its text without spaces, dashes, dots or
 * brackets, with a leading 00 read as +. Undefined for anything else, a JSON number included (it
 * cannot say +, and digits without it name no country for certain).
 */
export function e164Of(value: unknown): string | undefined {
  if (typeof value !== "string" || value === "") return undefined;
  const compact = value.replace(/[\s\-.()]/g, "");
  const e164 = compact.startsWith("00") ? `+${compact.slice(2)}` : compact;
  return isE164(e164) ? e164 : undefined;
}

/**
 * Every assigned country calling code (ITU-T E.164), by the ISO 3166-1 alpha-2 country whose numbers
 * it starts: a code shared by several countries names its main one, and the prefixes below refine it.
 */
const CALLING_CODES: Record<string, string> = {
  "1": "US",
  "7": "RU",
  "20": "EG",
  "27": "ZA",
  "30": "GR",
  "31": "NL",
  "32": "BE",
  "33": "FR",
  "34": "ES",
  "36": "HU",
  "39": "IT",
  "40": "RO",
  "41": "CH",
  "43": "AT",
  "44": "GB",
  "45": "DK",
  "46": "SE",
  "47": "NO",
  "48": "PL",
  "49": "DE",
  "51": "PE",
  "52": "MX",
  "53": "CU",
  "54": "AR",
  "55": "BR",
  "56": "CL",
  "57": "CO",
  "58": "VE",
  "60": "MY",
  "61": "AU",
  "62": "ID",
  "63": "PH",
  "64": "NZ",
  "65": "SG",
  "66": "TH",
  "81": "JP",
  "82": "KR",
  "84": "VN",
  "86": "CN",
  "90": "TR",
  "91": "IN",
  "92": "PK",
  "93": "AF",
  "94": "LK",
  "95": "MM",
  "98": "IR",
  // Africa (+2xx)
  "211": "SS",
  "212": "MA",
  "213": "DZ",
  "216": "TN",
  "218": "LY",
  "220": "GM",
  "221": "SN",
  "222": "MR",
  "223": "ML",
  "224": "GN",
  "225": "CI",
  "226": "BF",
  "227": "NE",
  "228": "TG",
  "229": "BJ",
  "230": "MU",
  "231": "LR",
  "232": "SL",
  "233": "GH",
  "234": "NG",
  "235": "TD",
  "236": "CF",
  "237": "CM",
  "238": "CV",
  "239": "ST",
  "240": "GQ",
  "241": "GA",
  "242": "CG",
  "243": "CD",
  "244": "AO",
  "245": "GW",
  "246": "IO",
  "247": "AC",
  "248": "SC",
  "249": "SD",
  "250": "RW",
  "251": "ET",
  "252": "SO",
  "253": "DJ",
  "254": "KE",
  "255": "TZ",
  "256": "UG",
  "257": "BI",
  "258": "MZ",
  "260": "ZM",
  "261": "MG",
  "262": "RE",
  "263": "ZW",
  "264": "NA",
  "265": "MW",
  "266": "LS",
  "267": "BW",
  "268": "SZ",
  "269": "KM",
  "290": "SH",
  "291": "ER",
  "297": "AW",
  "298": "FO",
  "299": "GL",
  // Europe (+3xx, +4xx)
  "350": "GI",
  "351": "PT",
  "352": "LU",
  "353": "IE",
  "354": "IS",
  "355": "AL",
  "356": "MT",
  "357": "CY",
  "358": "FI",
  "359": "BG",
  "370": "LT",
  "371": "LV",
  "372": "EE",
  "373": "MD",
  "374": "AM",
  "375": "BY",
  "376": "AD",
  "377": "MC",
  "378": "SM",
  "379": "VA",
  "380": "UA",
  "381": "RS",
  "382": "ME",
  "383": "XK",
  "385": "HR",
  "386": "SI",
  "387": "BA",
  "389": "MK",
  "420": "CZ",
  "421": "SK",
  "423": "LI",
  // The Americas (+5xx)
  "500": "FK",
  "501": "BZ",
  "502": "GT",
  "503": "SV",
  "504": "HN",
  "505": "NI",
  "506": "CR",
  "507": "PA",
  "508": "PM",
  "509": "HT",
  "590": "GP",
  "591": "BO",
  "592": "GY",
  "593": "EC",
  "594": "GF",
  "595": "PY",
  "596": "MQ",
  "597": "SR",
  "598": "UY",
  "599": "CW",
  // Oceania (+6xx)
  "670": "TL",
  "672": "NF",
  "673": "BN",
  "674": "NR",
  "675": "PG",
  "676": "TO",
  "677": "SB",
  "678": "VU",
  "679": "FJ",
  "680": "PW",
  "681": "WF",
  "682": "CK",
  "683": "NU",
  "685": "WS",
  "686": "KI",
  "687": "NC",
  "688": "TV",
  "689": "PF",
  "690": "TK",
  "691": "FM",
  "692": "MH",
  // East and South Asia, Middle East (+8xx, +9xx)
  "850": "KP",
  "852": "HK",
  "853": "MO",
  "855": "KH",
  "856": "LA",
  "880": "BD",
  "886": "TW",
  "960": "MV",
  "961": "LB",
  "962": "JO",
  "963": "SY",
  "964": "IQ",
  "965": "KW",
  "966": "SA",
  "967": "YE",
  "968": "OM",
  "970": "PS",
  "971": "AE",
  "972": "IL",
  "973": "BH",
  "974": "QA",
  "975": "BT",
  "976": "MN",
  "977": "NP",
  "992": "TJ",
  "993": "TM",
  "994": "AZ",
  "995": "GE",
  "996": "KG",
  "998": "UZ",
  // Countries within a shared code, by the prefix of their numbers. The North American Numbering
  // Plan (+1) by area code: Canada's, and those of its other members.
  ...codes(
    "CA",
    ...nanp(
      "204 226 236 249 250 257 263 289 306 343 354 365 367 368 382 403 416 418 428 431 437 438 " +
        "450 468 474 506 514 519 548 579 581 584 587 600 604 613 622 639 647 672 683 705 709 742 " +
        "753 778 780 782 807 819 825 867 873 879 902 905 942",
    ),
  ),
  "1268": "AG",
  "1264": "AI",
  "1684": "AS",
  "1246": "BB",
  "1441": "BM",
  "1242": "BS",
  "1767": "DM",
  ...codes("DO", "1809", "1829", "1849"),
  "1473": "GD",
  "1671": "GU",
  ...codes("JM", "1876", "1658"),
  "1869": "KN",
  "1345": "KY",
  "1758": "LC",
  "1670": "MP",
  "1664": "MS",
  ...codes("PR", "1787", "1939"),
  "1721": "SX",
  "1649": "TC",
  "1868": "TT",
  "1784": "VC",
  "1284": "VG",
  "1340": "VI",
  ...codes("KZ", "76", "77"),
  "4779": "SJ",
  "35818": "AX",
  "3906698": "VA",
  ...codes("YT", "262269", "262639"),
  ...codes("BQ", "5993", "5994", "5997"),
};

/** The +1 prefixes of a space-separated list of area codes of the North American Numbering Plan. */
function nanp(areaCodes: string): string[] {
  return areaCodes.split(" ").map((area) => `1${area}`);
}

/** The entries of CALLING_CODES for `country`, one per prefix. */
function codes(country: string, ...prefixes: string[]): Record<string, string> {
  return Object.fromEntries(prefixes.map((prefix) => [prefix, country]));
}

/** Every country {@linkcode countryOfE164} can answer. */
export const PHONE_COUNTRIES: ReadonlySet<string> = new Set(Object.values(CALLING_CODES));

/** The longest prefix in CALLING_CODES (Vatican City's, within Italy's +39). */
const LONGEST_PREFIX = Math.max(...Object.keys(CALLING_CODES).map((p) => p.length));

/**
 * The ISO country of an E.164 number, by the longest prefix of it that CALLING_CODES knows: `+44…` →
 * "GB", `+1876…` → "JM", `+7701…` → "KZ". Undefined when no assigned calling code starts it.
 */
export function countryOfE164(s: string): string | undefined {
  if (!isE164(s)) return undefined;
  const digits = s.slice(1);
  for (let length = Math.min(LONGEST_PREFIX, digits.length); length > 0; length--) {
    const country = CALLING_CODES[digits.slice(0, length)];
    if (country) return country;
  }
  return undefined;
}
