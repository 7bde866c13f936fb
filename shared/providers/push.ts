/** The push channel: one provider that routes each device token to FCM or APNs. */
import { pushServiceOf } from "../contacts/device_tokens.ts";
import { type OutboundMessage, type Provider, ProviderError, type SendResult } from "./types.ts";

const SERVICE_NAMES = { fcm: "FCM", apns: "APNs" } as const;

/** Options of {@linkcode createPushProvider}: the push services that are configured. */
export interface PushProviderOptions {
  fcm?: Provider;
  apns?: Provider;
}

/**
 * Creates the push provider: each message goes to the service of its token (`pushService`, stored
 * with a contact's device, else pushServiceOf): an iOS device's APNs token to APNs, every other
 * token, an iOS app's FCM registration token included, to FCM. Never to the other one when its own is
 * not configured: FCM refuses an APNs token as "not a valid FCM registration token", and every iOS
 * device would be removed as invalid. Without the service a token needs, its messages fail and the
 * token stays.
 */
export function createPushProvider(options: PushProviderOptions): Provider {
  return {
    name: "push",
    resendable: true,
    send(message: OutboundMessage): Promise<SendResult> {
      const service = message.pushService ?? pushServiceOf(message.to, message.platform);
      const provider = options[service];
      if (!provider) {
        return Promise.reject(new ProviderError(`Cannot send push: ${SERVICE_NAMES[service]} is not configured`));
      }
      return provider.send(message);
    },
  };
}
