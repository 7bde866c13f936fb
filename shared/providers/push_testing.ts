import { createApnsProvider } from "./apns.ts";
import {
  type ApnsErrorSpec,
  type FakeServer,
  type FcmErrorSpec,
  generateP256KeyPair,
  generateRsaKeyPair,
  type RecordedRequest,
  startFakeApns,
  startFakeFcm,
} from "../../harness/fakes/fake_servers.ts";
import { createFcmProvider } from "./fcm.ts";

const rsa = await generateRsaKeyPair();
const p256 = await generateP256KeyPair();
const project = { projectId: "push-test", clientEmail: "push@push-test.iam.gserviceaccount.com" };
const apple = { teamId: "TEAM123456", keyId: "KEY1234567", bundleId: "test.acme.app" };

/**
 * Fake FCM and APNs servers on loopback (each stopped by `await using`), with the real clients
 * pointed at them; `fcmErrors`/`apnsErrors` are answered for the device tokens they name.
 */
export function startFakePush(
  fcmErrors: Record<string, FcmErrorSpec> = {},
  apnsErrors: Record<string, ApnsErrorSpec> = {},
) {
  const fcmServer = startFakeFcm({ ...project, publicKey: rsa.publicKey, errors: fcmErrors });
  const apnsServer = startFakeApns({ ...apple, publicKey: p256.publicKey, errors: apnsErrors });
  const fcm = createFcmProvider({
    serviceAccount: {
      project_id: project.projectId,
      client_email: project.clientEmail,
      private_key: rsa.privateKeyPem,
    },
    baseUrl: fcmServer.url,
    tokenUrl: fcmServer.tokenUrl,
  });
  const apns = createApnsProvider({ ...apple, privateKey: p256.privateKeyPem, baseUrl: apnsServer.url });
  return { fcmServer, apnsServer, fcm, apns };
}

/** The requests that delivered a notification (not the OAuth token exchanges). */
export function pushSends(server: FakeServer): RecordedRequest[] {
  return server.requests.filter((r) => r.path !== "/token");
}
