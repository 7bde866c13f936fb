import { argon2id } from "hash-wasm";
import { timingSafeEqual } from "node:crypto";

/** OWASP's argon2id minimum: 19 MiB, two passes, one lane. */
const PARAMS = { memorySize: 19_456, iterations: 2, parallelism: 1, hashLength: 32 };

/** The shortest password accepted. */
export const MIN_PASSWORD_LENGTH = 12;

/** An argon2id PHC string (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`) of `password` with a fresh salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  return await argon2id({ password, salt, ...PARAMS, outputType: "encoded" });
}

const PHC = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

/** Unpadded base64, as PHC strings write it; undefined when it is not. */
function base64Bytes(text: string): Uint8Array | undefined {
  try {
    return Uint8Array.from(atob(text + "=".repeat((4 - text.length % 4) % 4)), (ch) => ch.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/**
 * Whether `password` matches `encoded`, with the parameters stored in it (so old hashes keep working
 * after PARAMS change), compared in constant time. A malformed hash never matches.
 */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const match = PHC.exec(encoded);
  if (!match) return false;
  const [, m, t, p, saltText, hashText] = match;
  const salt = base64Bytes(saltText);
  const hash = base64Bytes(hashText);
  if (!salt || !hash) return false;
  const again = await argon2id({
    password,
    salt,
    memorySize: Number(m),
    iterations: Number(t),
    parallelism: Number(p),
    hashLength: hash.length,
    outputType: "encoded",
  });
  const [a, b] = [new TextEncoder().encode(again), new TextEncoder().encode(encoded)];
  // Both lengths follow from the stored parameters: only the bytes are secret.
  return a.length === b.length && timingSafeEqual(a, b);
}

let dummy: Promise<string> | undefined;

/**
 * Spends the time of a real check for a sign-in whose email is unknown, so that the answer's timing
 * does not tell which emails have an account.
 */
export async function verifyNobody(password: string): Promise<false> {
  dummy ??= hashPassword(crypto.randomUUID());
  await verifyPassword(password, await dummy);
  return false;
}
