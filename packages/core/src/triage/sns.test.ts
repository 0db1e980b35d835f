import { describe, expect, it } from 'vitest';
import { hostTrusted, isSnsMessage, snsStringToSign, verifySnsMessage } from './sns';

describe('SNS_TRUSTED_HOSTS patterns', () => {
  const AWS = ['sns.*.amazonaws.com'];
  it('`*` is exactly one DNS label', () => {
    expect(hostTrusted('sns.eu-west-1.amazonaws.com', AWS)).toBe(true);
    expect(hostTrusted('SNS.US-EAST-1.AMAZONAWS.COM', AWS)).toBe(true);
    expect(hostTrusted('sns.amazonaws.com', AWS)).toBe(false);
    expect(hostTrusted('sns.evil.com.amazonaws.com', AWS)).toBe(false);
    expect(hostTrusted('sns.eu-west-1.amazonaws.com.evil.com', AWS)).toBe(false);
    expect(hostTrusted('evil.com', AWS)).toBe(false);
  });
  it('an exact host, several patterns', () => {
    expect(hostTrusted('127.0.0.1', ['127.0.0.1'])).toBe(true);
    expect(hostTrusted('localhost', ['127.0.0.1'])).toBe(false);
    expect(hostTrusted('sns.cn-north-1.amazonaws.com.cn', [...AWS, 'sns.*.amazonaws.com.cn'])).toBe(true);
  });
});

describe("AWS's canonical string", () => {
  const base = {
    Message: 'Hello world!',
    MessageId: 'id-1',
    Timestamp: '2012-05-02T00:54:06.655Z',
    TopicArn: 'arn:aws:sns:us-west-2:123456789012:MyTopic',
    SignatureVersion: '1',
    Signature: 'x',
    SigningCertURL: 'https://sns.us-west-2.amazonaws.com/x.pem',
  };
  it('Notification: Message, MessageId, Subject (when present), Timestamp, TopicArn, Type', () => {
    expect(
      snsStringToSign({ ...base, Type: 'Notification', Subject: 'S', UnsubscribeURL: 'https://u' }),
    ).toBe(
      'Message\nHello world!\nMessageId\nid-1\nSubject\nS\nTimestamp\n2012-05-02T00:54:06.655Z\nTopicArn\narn:aws:sns:us-west-2:123456789012:MyTopic\nType\nNotification\n',
    );
    expect(snsStringToSign({ ...base, Type: 'Notification' })).not.toContain('Subject');
  });
  it('SubscriptionConfirmation and UnsubscribeConfirmation: with SubscribeURL and Token', () => {
    for (const Type of ['SubscriptionConfirmation', 'UnsubscribeConfirmation'] as const)
      expect(snsStringToSign({ ...base, Type, Token: 'T', SubscribeURL: 'https://s' })).toBe(
        `Message\nHello world!\nMessageId\nid-1\nSubscribeURL\nhttps://s\nTimestamp\n2012-05-02T00:54:06.655Z\nToken\nT\nTopicArn\narn:aws:sns:us-west-2:123456789012:MyTopic\nType\n${Type}\n`,
      );
  });
});

describe('verifySnsMessage refuses before fetching anything', () => {
  const hosts = ['sns.*.amazonaws.com'];
  const msg = {
    Type: 'Notification',
    MessageId: 'm',
    TopicArn: 'arn',
    Message: 'x',
    Timestamp: '2026-01-01T00:00:00Z',
    SignatureVersion: '1',
    Signature: 'AAAA',
  };
  it('unsigned: 403; untrusted, http or credentialed certificate URLs: 403; version 3: 403', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...msg, Signature: undefined, SigningCertURL: 'https://sns.a.amazonaws.com/x.pem' }, /not signed/],
      [{ ...msg, SigningCertURL: 'https://evil.com/x.pem' }, /not a trusted SNS host/],
      [{ ...msg, SigningCertURL: 'http://sns.a.amazonaws.com/x.pem' }, /must be https/],
      [{ ...msg, SigningCertURL: 'https://u:p@sns.a.amazonaws.com/x.pem' }, /credentials/],
      [
        { ...msg, SignatureVersion: '3', SigningCertURL: 'https://sns.a.amazonaws.com/x.pem' },
        /not supported/,
      ],
    ];
    for (const [body, detail] of cases)
      await expect(verifySnsMessage(body, hosts)).rejects.toMatchObject({
        status: 403,
        detail: expect.stringMatching(detail),
      });
  });
  it('a confirmation without Token or SubscribeURL is 400; a SubscribeURL elsewhere is 403', async () => {
    const sub = {
      ...msg,
      Type: 'SubscriptionConfirmation',
      SigningCertURL: 'https://sns.a.amazonaws.com/x.pem',
    };
    await expect(verifySnsMessage(sub, hosts)).rejects.toMatchObject({ status: 400 });
    await expect(
      verifySnsMessage(
        { ...sub, Token: 't', SubscribeURL: 'https://evil.com/?Action=ConfirmSubscription' },
        hosts,
      ),
    ).rejects.toMatchObject({ status: 403, detail: expect.stringMatching(/SubscribeURL/) });
  });
  it('what looks like SNS', () => {
    expect(isSnsMessage(msg)).toBe(true);
    expect(isSnsMessage({ Type: 'x' })).toBe(false);
    expect(isSnsMessage([msg])).toBe(false);
  });
});
