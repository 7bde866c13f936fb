/**
 * Encryption of secrets kept in the database (teams' provider credentials): AES-256-GCM with Web
 * Crypto, a fresh 96-bit IV per value, and additional data that binds a ciphertext to the row it
 * belongs to, so that one copied into another team's row does not decrypt.
 */

/** A sealed value: what the database keeps. */
export interface Sealed {
  ciphertext: Uint8Array<ArrayBuffer>;
  iv: Uint8Array<ArrayBuffer>;
}

/** Imports the AES-256-GCM key from its base64 form (CHANNEL_ACCOUNTS_KEY). */
export async function importSecretKey(base64: string): Promise<CryptoKey> {
  const raw = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  if (raw.length !== 32) throw new Error("Cannot import the key: it must be 32 bytes");
  return await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
}

/** A new random key in base64 (what `openssl rand -base64 32` prints). */
export function generateSecretKey(): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
}

/** Encrypts `value` (JSON) under `key`, bound to `context`. */
export async function seal(key: CryptoKey, value: unknown, context: string): Promise<Sealed> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const plaintext = new TextEncoder().encode(JSON.stringify(value));
  const additionalData = new TextEncoder().encode(context);
  const ciphertext = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData }, key, plaintext);
  return { ciphertext: new Uint8Array(ciphertext), iv };
}

/** Decrypts what {@linkcode seal} made with the same key and context; throws when either differs. */
export async function unseal<T>(key: CryptoKey, sealed: Sealed, context: string): Promise<T> {
  const additionalData = new TextEncoder().encode(context);
  const plaintext = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: sealed.iv, additionalData },
    key,
    sealed.ciphertext,
  );
  return JSON.parse(new TextDecoder().decode(plaintext)) as T;
}
