/** The push channel: one provider that routes each device token to FCM or APNs. */
import { type OutboundMessage, type Provider, ProviderError, type SendResult } from "./types.ts";

/** Options of {@linkcode createPushProvider}: the push services that are configured. */
export interface PushProviderOptions {
  fcm?: Provider;
  apns?: Provider;
}

/**
 * Creates the push provider: `ios` tokens go to APNs, every other platform to FCM. An `ios` token is
 * always an APNs token (64 hex characters: the API takes no other), which FCM refuses as "not a valid
 * FCM registration token": sent there when APNs is not configured, every iOS device would be
 * removed as invalid. Without the service a platform needs, its messages fail and its tokens stay.
 */
export function createPushProvider(options: PushProviderOptions): Provider {
  return {
    name: "push",
    resendable: true,
    send(message: OutboundMessage): Promise<SendResult> {
      const provider = message.platform === "ios" ? options.apns : options.fcm;
      if (!provider) {
        return Promise.reject(
          new ProviderError(`Cannot send push: no provider for ${message.platform ?? "unknown"} devices`),
        );
      }
      return provider.send(message);
    },
  };
}
