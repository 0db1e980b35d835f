// cluster-key-slot (the CRC16 key-to-slot function ioredis itself routes with) ships no types.
declare module 'cluster-key-slot' {
  /** The Redis Cluster hash slot (0..16383) of a key, honouring a `{hash tag}`. */
  function calculateSlot(key: string | Buffer): number;
  export = calculateSlot;
}
