import type { Config } from "../shared/config.ts";
import type { Identity } from "../shared/identities.ts";
import { countryOfE164 } from "../shared/phone.ts";
import type { SendLookups } from "../shared/sending/lookups.ts";
import { render, type Template } from "../shared/templates.ts";
import type { OtpChannel } from "./codes.ts";

/** The reserved template key of each channel (case-sensitive). */
export const OTP_TEMPLATE_KEYS: Record<OtpChannel, string> = {
  email: "verify-api-otp-email",
  sms: "verify-api-otp-sms",
  whatsapp: "verify_api_otp_whatsapp",
};

/** The texts of an OTP message before the code is filled in. */
interface Texts {
  subject?: string;
  html?: string;
  text: string;
}

/** The built-in templates, used whenever no usable custom one exists. */
const DEFAULTS: Record<OtpChannel, Texts> = {
  email: {
    subject: "Your verification code",
    html: "<p>Your verification code is <strong>{{otp_code}}</strong>.</p>" +
      "<p>It expires in {{expiry_minutes}} minutes. If you did not ask for it, ignore this email.</p>",
    text: "Your verification code is {{otp_code}}. It expires in {{expiry_minutes}} minutes.",
  },
  sms: { text: "Your verification code is {{otp_code}}. It expires in {{expiry_minutes}} minutes." },
  whatsapp: {
    text: "{{otp_code}} is your verification code. It expires in {{expiry_minutes}} minutes. Do not share it.",
  },
};

/** How the OTP of one channel is worded and who it comes from. */
export interface OtpTemplate {
  channel: OtpChannel;
  custom: boolean;
  texts: Texts;
  from: string;
  fromName?: string;
}

/** What fills an OTP template. */
export interface OtpVariables {
  otp_code: string;
  expiry_minutes: number;
  first_name: string | null;
  last_name: string | null;
}

/** A rendered OTP message. */
export interface RenderedOtp {
  subject?: string;
  html?: string;
  text: string;
}

function has(text: string, ...names: string[]): boolean {
  return names.some((name) => new RegExp(`\\{\\{\\s*${name}\\s*\\}\\}`).test(text));
}

/** The custom template's texts for this recipient, when it is approved, complete and serves them. */
function customTexts(template: Template, country: string | undefined): Texts | undefined {
  if (template.status !== "approved") return undefined;
  let texts: Texts;
  if (template.channel === "email") {
    const body = template.html ?? template.text ?? template.body;
    if (!body) return undefined;
    texts = {
      subject: template.subject ?? DEFAULTS.email.subject,
      html: template.html ?? undefined,
      text: template.text ?? template.body ?? body,
    };
  } else {
    const variations = template.country_variations;
    const body = variations ? (country ? variations[country] : undefined) : template.body ?? template.text;
    if (!body) return undefined;
    texts = { text: body };
  }
  const all = [texts.subject, texts.html, texts.text].filter(Boolean).join("\n");
  // WhatsApp templates may number their placeholders: {{1}} the code, {{2}} the expiry.
  const numbered = template.channel === "whatsapp";
  const complete = has(all, "otp_code", ...(numbered ? ["1"] : [])) &&
    has(all, "expiry_minutes", ...(numbered ? ["2"] : []));
  return complete ? texts : undefined;
}

/**
 * Whether OTP sends would use `template` (under its reserved key) for a recipient in `country`: it is
 * approved, has a text for the country and names the code and expiry; else the built-in text is used.
 */
export function usableForOtp(template: Template, country?: string): boolean {
  return customTexts(template, country) !== undefined;
}

/** An SMS identity serves a country when it lists it, or lists none (every country). */
function identityServes(identity: Identity, country: string | undefined): boolean {
  return identity.countries === null || (country !== undefined && identity.countries.includes(country));
}

function defaultSender(config: Config, channel: OtpChannel): { from: string; fromName?: string } {
  if (channel === "email") return { from: config.EMAIL_FROM, fromName: config.EMAIL_FROM_NAME };
  return { from: channel === "sms" ? config.SMS_FROM : config.WHATSAPP_FROM };
}

/**
 * The template of one channel: the team's approved template under the reserved key when it holds
 * `otp_code` and `expiry_minutes` and a sender identity serves the recipient (for SMS, the country
 * of the number); otherwise, silently, the built-in one from the team's default identity.
 */
export async function resolveOtpTemplate(
  lookups: SendLookups,
  config: Config,
  teamId: string,
  channel: OtpChannel,
  recipient: string,
): Promise<OtpTemplate> {
  const country = channel === "email" ? undefined : countryOfE164(recipient);
  // The sending pipeline's cached look-ups: a template or identity change shows within seconds.
  const [template, identity] = await Promise.all([
    lookups.template(teamId, channel, OTP_TEMPLATE_KEYS[channel]),
    lookups.identity(teamId, channel, channel === "sms" ? { country } : {}),
  ]);
  const serves = identity !== undefined && (channel !== "sms" || identityServes(identity, country));
  const custom = template && template.key === OTP_TEMPLATE_KEYS[channel] && serves
    ? customTexts(template, country)
    : undefined;
  const sender = identity && serves
    ? { from: identity.from_address, fromName: identity.name ?? undefined }
    : defaultSender(config, channel);
  return { channel, custom: custom !== undefined, texts: custom ?? DEFAULTS[channel], ...sender };
}

/**
 * Fills a template with the code, expiry and names (named and WhatsApp-numbered placeholders).
 * Undefined when a text would be over MAX_RENDERED_CHARS (a custom template naming `{{first_name}}`
 * thousands of times): it would be sent cut short.
 */
export function renderOtp(template: OtpTemplate, variables: OtpVariables): RenderedOtp | undefined {
  const values = { ...variables, 1: variables.otp_code, 2: variables.expiry_minutes };
  let tooLarge = false;
  const fill = (text: string | undefined) => {
    if (text === undefined) return undefined;
    const rendered = render(text, values);
    tooLarge ||= rendered.tooLarge === true;
    return rendered.text;
  };
  const message = {
    subject: fill(template.texts.subject),
    html: fill(template.texts.html),
    text: fill(template.texts.text)!,
  };
  return tooLarge ? undefined : message;
}

/** The built-in template of `template`'s channel, from the same sender. */
export function builtIn(template: OtpTemplate): OtpTemplate {
  return { ...template, custom: false, texts: DEFAULTS[template.channel] };
}
