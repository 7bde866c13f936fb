/** The push channel: one provider that routes each device token to FCM or APNs. */
import { type OutboundMessage, type Provider, ProviderError, type SendResult } from "./types.ts";

/** Options of {@linkcode createPushProvider}: the push services that are configured. */
export interface PushProviderOptions {
  fcm?: Provider;
  apns?: Provider;
}

/**
 * Creates the push provider: `ios` tokens go to APNs when it is configured (else FCM, which also
 * delivers to iOS apps that registered with it); every other platform goes to FCM.
 */
export function createPushProvider(options: PushProviderOptions): Provider {
  return {
    name: "push",
    send(message: OutboundMessage): Promise<SendResult> {
      const provider = message.platform === "ios" ? options.apns ?? options.fcm : options.fcm;
      if (!provider) {
        return Promise.reject(
          new ProviderError(`Cannot send push: no provider for ${message.platform ?? "unknown"} devices`),
        );
      }
      return provider.send(message);
    },
  };
}
