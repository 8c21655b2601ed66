// Rendered answers of the most-read people (return_services bodies, the widget's boot scripts), kept in
// memory within ANSWER_CACHE_MB and dropped the moment anything that fed them changes, whoever
// changes it (this server, the CLI, another instance or cluster worker, an operator's SQL).
//
// Each answer carries tags naming the rows it was built from (`u{id}` a user, `s{id}` a subject,
// `i{partner}.{subject}` one partner's pushes about a subject, `p{id}` a partner: collected by the
// views in services/partner-data.ts) and the catalogue version it was rendered with. Triggers
// (migrations 012, 013, 024) name the tags of every changed row in the table `answer_changes`, the
// change feed this cache shares with the partner cache (services/change-feed.ts). A lookup that may
// be answered from memory (its key is kept), or whose answer will be kept, first waits for a
// reading of the feed that started in its own turn of the event loop or later
// (`ChangeFeed.fresh()`), so a change committed before the request was sent is always applied
// before it is answered. Other lookups (the first ask for a person, most reads of a
// crawl) read no feed: their render reads the database, current by itself. While the feed cannot be
// read, nothing is served from memory nor kept; a reading that timed out (a stalled database) is
// answered as the database's error at once, so a read is answered 503 within DATABASE_TIMEOUT_MS.
//
// So visibility changes (opt-out, deletion, a link ended) take effect exactly as fast as without
// the cache, with one bounded exception: on PostgreSQL a public view (`mayLag` in get(), the reads
// that may be slightly behind, like a replica's) is answered from memory without a round trip while
// a reading that started at most MAX_LAG_MS ago, and after this process's last write, succeeded:
// so a change committed by another process is seen by every public lookup made MAX_LAG_MS after
// it, one of this process at once, and a busy server's hits do not each wait for the feed (one
// slow reading would hold every hit behind it).
// An operator who turns shared caching off (PUBLIC_CACHE_MAX_AGE=0) gets exact public views too.
// A render that overlaps a change to one of its tags is answered but not kept.
//
// Once the cache is three quarters full, an answer is kept the second time it is asked for, not the
// first (class AskedOnce): reads spread over everyone (a partner syncing its whole user base, a
// crawler) would otherwise replace the most read answers with ones nobody asks for again, and every
// replaced answer is old-generation garbage the collector has to trace and sweep. Until then every
// answer rendered is kept: keeping it costs no other answer its place, and an answer asked for
// twice is then answered from memory the second time. The cache fills to its budget
// with answers asked for again and stays there (the least recently read make way), so the first
// asks are not kept again until changes have dropped a quarter of it. An answer a change dropped
// counts as asked for before: it had earned its place, and its next render is kept at once
// rather than at the second ask after each change (simulated on the benchmark's mix, where pushes
// follow reads to the most read people: 4 points of hit share). Once full, an answer asked for before
// takes a place only from one asked for less often lately (class FrequencySketch, TinyLFU's
// admission): reads going round more people than the cache holds, again and again (a partner's
// nightly sync, the benchmark's replayed pool), would otherwise replace at each second ask answers
// about to be read again, for nothing: simulated (bench/admission-sim.ts) on the benchmark's pool of
// public reads, 14.5 -> 1.2 answers stored per 100 reads, on its mix 21 -> 16 (hits 48 -> 51 %).
import { EventEmitter } from 'node:events';
import { LRUCache } from 'lru-cache';
import { FRESH, type ChangeFeed, type Changes, type Freshness } from './change-feed.js';

/** What one answer depends on, filled in while it is rendered. */
export type AnswerTags = Set<string>;

/** Makes an answer, adding the tags of what it read; `kept`: whether it may be kept (then it must read current data). */
type Render<T> = (tags: AnswerTags, kept: boolean) => Promise<T>;

export const userTag = (id: number) => `u${id}`;
export const subjectTag = (id: number) => `s${id}`;
export const partnerTag = (id: number) => `p${id}`;
/** One partner's own entries about a subject (its partner_identities rows): what that partner's pushes change (migration 024). */
export const pushTag = (partnerId: number, subjectId: number) => `i${partnerId}.${subjectId}`;

/**
 * A kept answer. Its tags are one string (separated by spaces), not an array of strings: a cache of
 * tens of thousands of answers is most of what the collector traces at each mark-compact, and an
 * array of four tags is six objects where one string is one.
 */
interface Entry {
  readonly value: unknown;
  readonly tags: string;
  readonly catalogue: string;
}

const TAG_SEPARATOR = ' ';

/** The partner row read before the lookup: its tag (`p{id}`), and the feed's sequence when it was read (unknown: the answer is not kept). */
export interface ReadBefore {
  readonly tag: string;
  readonly at: number | undefined;
}

/** What a lookup says about itself besides its key. */
export interface LookupOptions {
  /** A row the caller read before asking (the partner behind the call): the answer is kept only when that row has not changed since. */
  readonly readBefore?: ReadBefore | undefined;
  /** The lookup may be a moment behind another process's commit (a public view; see the top of this file). */
  readonly mayLag?: boolean;
}

/** What an entry costs beyond its value: the key, the entry, LRU and tag index bookkeeping. */
const ENTRY_OVERHEAD = 300;
/** Below this share of its budget the cache keeps every answer it renders; past it, only those asked for before (AskedOnce). */
const ROOM = 0.75;
/** Tags remembered as recently changed, for renders still running; past this, renders started earlier are not kept. */
const RECENT_TAGS_MAX = 10_000;

/** Emits `invalidated` (tags), and the feed's `down` (it could not be read) and `live` (it can again), for tests and logs. */
export class AnswerCache extends EventEmitter {
  private readonly entries: LRUCache<string, Entry> | null;
  /**
   * The keys of the answers carrying each tag, by the tag's 32-bit hash (tagHash): a small integer
   * is no object of its own, where a string per tag was one more for the collector to trace. Two
   * tags with one hash share an entry, so a change to one also drops the other's answers (dropped
   * early, never kept too long). A tag that one answer carries (a person read in one view and
   * format) maps to that key itself, not to a set of one, which would cost every such answer a few
   * hundred bytes more.
   */
  private readonly byTag = new Map<number, string | Set<string>>();
  /**
   * The feed's sequence each recently changed tag changed at (a render records the sequence when it
   * starts), by tagHash: the feed's tag strings then die young. A render that read a tag sharing a
   * changed one's hash is not kept (kept too little, never too long).
   */
  private readonly changedAt = new Map<number, number>();
  /** Renders that started before this sequence are not kept (recent tags were forgotten, or all was dropped). */
  private floor = 0;
  /**
   * The sequence each partner last changed at, and when everything was last dropped: a partner row
   * may have been read long before the lookup (the partner cache keeps it), so whether it changed
   * since must outlive the forgetting of recent tags above, or every answer for a partner would go
   * unkept once a busy feed had named RECENT_TAGS_MAX other tags. One entry per partner changed.
   */
  private readonly partnerChangedAt = new Map<string, number>();
  private allDroppedAt = 0;
  /** The change feed, while this cache is enabled; its unsubscribe and event forwarding, undone by close(). */
  private readonly feed: ChangeFeed | null;
  private readonly detach: () => void = () => {};
  private readonly askedOnce: AskedOnce | null;
  /** How often each key was asked for lately: who keeps a place once the cache is full. */
  private readonly frequency: FrequencySketch | null;
  /** Below this many bytes kept, every answer rendered is kept, not only those asked for before. */
  private readonly roomBytes: number;
  /** How old the last reading may be for a lookup that may lag (0: every lookup waits for its own reading). */
  private readonly maxLagMs: number;
  /** Lookups answered from memory, and renders (for tests and /metrics). */
  hits = 0;
  misses = 0;

  /**
   * `maxMb` 0 (or no feed): never cache. `maxLagMs`: lookups that say they may lag are answered
   * from a reading up to this old when the feed is a round trip away (PostgreSQL; MAX_LAG_MS in
   * production); 0: every lookup waits for a reading of its own. `room`: the share of the budget
   * below which every answer rendered is kept (0: only answers asked for before, see AskedOnce).
   */
  constructor(feed: ChangeFeed | null, maxMb: number, maxLagMs = 0, room = ROOM) {
    super();
    this.roomBytes = maxMb * 1024 * 1024 * room;
    this.maxLagMs = feed && !feed.local ? maxLagMs : 0;
    this.entries =
      maxMb > 0 && feed
        ? new LRUCache<string, Entry>({
            maxSize: maxMb * 1024 * 1024,
            sizeCalculation: (entry, key) => entrySize(key, entry),
            dispose: (entry, key) => this.unindex(key, entry),
          })
        : null;
    // About one slot per 512 bytes of cache: more slots than answers it can hold, so a key asked for
    // again while it would still be among them finds its mark.
    this.askedOnce = this.entries ? new AskedOnce(Math.min(22, Math.max(10, Math.ceil(Math.log2(maxMb * 2048))))) : null;
    // Counters for about four times the answers the budget holds (some 2 kB each), four rows of them.
    this.frequency = this.entries ? new FrequencySketch(Math.min(20, Math.max(10, Math.ceil(Math.log2(maxMb * 2048)))), maxMb * 5120) : null;
    this.feed = this.entries ? feed : null;
    const source = this.feed;
    if (source)
      this.detach = source.subscribe(this, (changes: Changes) => (changes === 'all' ? this.clear(source.sequence) : this.drop(changes, source.sequence)));
  }

  /** Whether answers are served from memory now: enabled, and the change feed was read last time. */
  get caching(): boolean {
    return this.feed?.live === true;
  }

  get size(): number {
    return this.entries?.size ?? 0;
  }

  get bytes(): number {
    return this.entries?.calculatedSize ?? 0;
  }

  /**
   * The value kept under `key`, or what `render` makes of it (kept when nothing it read changed
   * meanwhile). `render` adds the tags of the rows it reads; an error it throws is not kept. Its
   * `kept` argument says whether its answer may be kept: only then must it read current data (the
   * primary database), otherwise it may read a replica that is slightly behind (Db.behind()).
   * An answer from memory is the value itself, not a promise, when the feed's reading is at hand
   * (SQLite, or a public view on PostgreSQL): a hit then waits for nothing.
   */
  get<T>(key: string, catalogueVersion: string, render: Render<T>, options: LookupOptions = {}): T | Promise<T> {
    if (!this.entries || !this.feed) return render(new Set(), false);
    this.frequency!.add(key);
    // The feed is read first only when memory may answer (the key is kept) or the answer will be
    // kept (asked for before): a render reads the database, current by itself, and an answer kept
    // after a reading is not dropped by the changes that reading applies, which it already shows.
    if (!this.entries.has(key) && !this.wouldKeep(key)) return this.render(key, catalogueVersion, render, options, this.feed.live);
    // Memory reflects every change the last applied reading named (a changed tag's entries are
    // dropped as it is applied), and a render reads the primary: a lookup that may lag accepts
    // that reading when it is recent enough, and waits for one of its own otherwise.
    const usable = options.mayLag && this.maxLagMs > 0 && this.feed.readSinceWrites(this.maxLagMs) ? FRESH : this.feed.fresh();
    return usable instanceof Promise
      ? usable.then((u) => this.fromMemoryOrRender(key, catalogueVersion, render, options, u))
      : this.fromMemoryOrRender(key, catalogueVersion, render, options, usable);
  }

  private fromMemoryOrRender<T>(key: string, catalogueVersion: string, render: Render<T>, options: LookupOptions, usable: Freshness): T | Promise<T> {
    if (usable.unavailable) throw usable.unavailable;
    if (usable.ok) {
      const hit = this.entries!.get(key);
      if (hit && hit.catalogue === catalogueVersion) {
        this.hits++;
        return hit.value as T;
      }
    }
    return this.render(key, catalogueVersion, render, options, usable.ok);
  }

  /** Renders the answer, and keeps it when `keep` and nothing it read changed meanwhile. */
  private async render<T>(key: string, catalogueVersion: string, render: Render<T>, options: LookupOptions, keep: boolean): Promise<T> {
    const feed = this.feed!;
    const entries = this.entries!;
    this.misses++;
    const started = feed.sequence;
    const tags: AnswerTags = new Set();
    // Only a render told it may be kept must read current data; any other may read a replica, and
    // is never kept (a concurrent ask may have made its key keepable meanwhile).
    const mayKeep = keep && this.wouldKeep(key);
    const value = await render(tags, mayKeep);
    const readBefore = options.readBefore;
    const inputsCurrent = !readBefore || (readBefore.at !== undefined && this.rowUnchangedSince(readBefore));
    if (keep && feed.live && inputsCurrent && this.unchangedSince(started, tags) && this.admits(key) && mayKeep) {
      const entry: Entry = { value, tags: [...tags].join(TAG_SEPARATOR), catalogue: catalogueVersion };
      if (!this.hasRoom() && !this.worthItsPlace(key, entry)) {
        // Still asked for before: its next render competes for a place again.
        this.askedOnce!.remember(key);
        return value;
      }
      entries.set(key, entry);
      // A value larger than the whole cache is refused by the LRU: index only what it kept.
      if (entries.peek(key) === entry) for (const tag of tags) this.index(tagHash(tag), key);
    }
    return value;
  }

  /** Whether the cache holds less than its room: keeping one more answer then costs no other answer its place. */
  private hasRoom(): boolean {
    return this.entries!.calculatedSize < this.roomBytes;
  }

  /** Whether an answer rendered now would be kept (changing nothing): the cache has room, or its key was asked for before. */
  private wouldKeep(key: string): boolean {
    return this.hasRoom() || this.askedOnce!.wouldKeep(key);
  }

  /** Whether the answer just rendered may be kept (past the room, only one asked for before); remembers the ask either way. */
  private admits(key: string): boolean {
    return this.askedOnce!.askedBefore(key) || this.hasRoom();
  }

  /**
   * Past the room: whether an answer asked for before takes a place. Where there is one free, yes;
   * where it would evict another, only if asked for more often lately than the answer it would
   * evict first (the least recently read). So reads spread wider than the cache (a partner syncing
   * everyone, again and again) do not replace answers as often as they ask for them, each replaced
   * answer garbage for the collector to find, and the answers kept stay to be read again: TinyLFU's
   * admission (as in Caffeine). A change frees the place of what it drops: its next render is kept.
   */
  private worthItsPlace(key: string, entry: Entry): boolean {
    const entries = this.entries!;
    // An answer kept under this key already (rendered with another catalogue) is replaced: its place is its own.
    if (entries.has(key) || entries.calculatedSize + entrySize(key, entry) <= entries.maxSize) return true;
    const victim = entries.rkeys().next();
    if (victim.done) return true;
    const frequency = this.frequency!;
    return frequency.estimate(key) > frequency.estimate(victim.value);
  }

  /** Whether the row read before the lookup (a partner's) has not changed since it was read. */
  private rowUnchangedSince(row: ReadBefore): boolean {
    const at = row.at!;
    // partnerChangedAt is set with every change of a partner tag and cleared only with everything (allDroppedAt).
    return at >= this.allDroppedAt && (this.partnerChangedAt.get(row.tag) ?? -1) <= at;
  }

  private unchangedSince(started: number, tags: Iterable<string>): boolean {
    if (started < this.floor) return false;
    for (const tag of tags) if ((this.changedAt.get(tagHash(tag)) ?? -1) > started) return false;
    return true;
  }

  /** Drops every answer carrying one of `tags` (`*`: all), as the reading numbered `now` names them. */
  private drop(tags: readonly string[], now: number): void {
    if (tags.length === 0) return;
    if (tags.includes('*')) {
      this.clear(now);
      return;
    }
    if (this.changedAt.size + tags.length > RECENT_TAGS_MAX) {
      this.changedAt.clear();
      this.floor = now;
    }
    for (const tag of tags) {
      const hash = tagHash(tag);
      this.changedAt.set(hash, now);
      if (tag.startsWith('p')) this.partnerChangedAt.set(tag, now);
      const keys = this.byTag.get(hash);
      if (keys === undefined) continue;
      this.byTag.delete(hash);
      if (typeof keys === 'string') this.dropChanged(keys);
      else for (const key of keys) this.dropChanged(key);
    }
    this.emit('invalidated', tags);
  }

  /** Drops an answer a change made stale; its next render is kept (see the top of this file). */
  private dropChanged(key: string): void {
    if (this.entries?.delete(key)) this.askedOnce?.remember(key);
  }

  /** Drops everything, as the reading numbered `now` asks when it cannot name what changed. */
  private clear(now: number): void {
    this.floor = now;
    this.allDroppedAt = now;
    this.partnerChangedAt.clear();
    this.changedAt.clear();
    this.byTag.clear();
    this.entries?.clear();
    this.emit('invalidated', ['*']);
  }

  private index(hash: number, key: string): void {
    const keys = this.byTag.get(hash);
    if (keys === undefined) this.byTag.set(hash, key);
    else if (typeof keys !== 'string') keys.add(key);
    else if (keys !== key) this.byTag.set(hash, new Set([keys, key]));
  }

  private unindex(key: string, entry: Entry): void {
    // Without split(): the tags are hashed where they lie in the string, making no string per tag.
    const tags = entry.tags;
    let start = 0;
    while (start <= tags.length) {
      let end = tags.indexOf(TAG_SEPARATOR, start);
      if (end === -1) end = tags.length;
      if (end > start) this.unindexOne(hashOf(tags, start, end), key);
      start = end + 1;
    }
  }

  private unindexOne(hash: number, key: string): void {
    const keys = this.byTag.get(hash);
    if (keys === undefined) return;
    if (typeof keys === 'string') {
      if (keys === key) this.byTag.delete(hash);
      return;
    }
    keys.delete(key);
    if (keys.size === 0) this.byTag.delete(hash);
    else if (keys.size === 1) this.byTag.set(hash, keys.values().next().value as string);
  }

  close(): void {
    this.detach();
    this.entries?.clear();
  }
}

/**
 * How often each key was asked for lately, estimated in a fixed table (a count-min sketch: four rows
 * of byte counters, each key counted in one counter a row, its estimate the smallest): no
 * allocation per key, and a key is never estimated below its count. Every `halfLife` counts all
 * counters are halved, so that what was asked for long ago weighs less than what is asked for now.
 */
class FrequencySketch {
  private readonly counters: Uint8Array;
  private readonly rowMask: number;
  private readonly rowBits: number;
  private counted = 0;
  /** The counters of the key last given to indexes(): four numbers without an array per call. */
  private i0 = 0;
  private i1 = 0;
  private i2 = 0;
  private i3 = 0;

  constructor(
    rowBits: number,
    private readonly halfLife: number,
  ) {
    this.rowBits = rowBits;
    this.rowMask = (1 << rowBits) - 1;
    this.counters = new Uint8Array(4 << rowBits);
  }

  add(key: string): void {
    this.indexes(key);
    const c = this.counters;
    if (c[this.i0]! < 255) c[this.i0]!++;
    if (c[this.i1]! < 255) c[this.i1]!++;
    if (c[this.i2]! < 255) c[this.i2]!++;
    if (c[this.i3]! < 255) c[this.i3]!++;
    if (++this.counted >= this.halfLife) {
      this.counted = 0;
      for (let i = 0; i < c.length; i++) c[i] = c[i]! >> 1;
    }
  }

  estimate(key: string): number {
    this.indexes(key);
    const c = this.counters;
    return Math.min(c[this.i0]!, c[this.i1]!, c[this.i2]!, c[this.i3]!);
  }

  private indexes(key: string): void {
    // The key's two hashes, combined into one counter a row (Kirsch and Mitzenmacher).
    hashTwice(key);
    const a = hashA;
    const b = hashB | 1;
    const m = this.rowMask;
    const n = this.rowBits;
    this.i0 = a & m;
    this.i1 = (1 << n) | ((a + b) & m);
    this.i2 = (2 << n) | ((a + Math.imul(2, b)) & m);
    this.i3 = (3 << n) | ((a + Math.imul(3, b)) & m);
  }
}

/**
 * Which keys were asked for recently, as 32-bit fingerprints in a fixed table indexed by a hash of
 * the key: no allocation per key, and a fixed size whatever the traffic. A key whose slot another
 * key took meanwhile counts as not asked for (it is kept the next time); two keys with the same slot
 * and fingerprint (one chance in 2^32) only let an answer in early.
 */
class AskedOnce {
  private readonly slots: Int32Array;

  constructor(bits: number) {
    this.slots = new Int32Array(1 << bits);
  }

  /** Whether `key` was asked for since its slot last changed hands; if not, remembers that it was now. */
  askedBefore(key: string): boolean {
    const slot = this.slotOf(key);
    const fingerprint = this.fingerprint;
    if (this.slots[slot] === fingerprint) {
      this.slots[slot] = 0;
      return true;
    }
    this.slots[slot] = fingerprint;
    return false;
  }

  /** Marks `key` as asked for, so that askedBefore(key) says yes (unless another key takes its slot first). */
  remember(key: string): void {
    this.slots[this.slotOf(key)] = this.fingerprint;
  }

  /** Whether askedBefore(key) would say yes now (the answer rendered next is kept), changing nothing. */
  wouldKeep(key: string): boolean {
    const slot = this.slotOf(key);
    return this.slots[slot] === this.fingerprint;
  }

  /** The fingerprint of the key last given to slotOf(): two numbers without an object per call. */
  private fingerprint = 0;

  private slotOf(key: string): number {
    // The key's first hash for the slot, its second for the fingerprint, never 0 (an empty slot).
    hashTwice(key);
    this.fingerprint = hashB | 1;
    return (hashA >>> 0) & (this.slots.length - 1);
  }
}

/** What an entry costs the budget: its key, its value, its tags and their places in the index, and the bookkeeping around them. */
function entrySize(key: string, entry: Entry): number {
  return key.length + ENTRY_OVERHEAD + sizeOf(entry.value) + entry.tags.length + tagCount(entry.tags) * TAG_INDEX_COST;
}

/** What indexing one tag of an answer costs (its place in the index), for the budget. */
const TAG_INDEX_COST = 24;

/** The tag's index key: FNV-1a over its characters, as a signed 32-bit integer (a small integer to V8, not an object). */
function tagHash(tag: string): number {
  return hashOf(tag, 0, tag.length);
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function hashOf(text: string, start: number, end: number): number {
  let hash = FNV_OFFSET;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), FNV_PRIME);
  return hash | 0;
}

/**
 * Two 32-bit hashes of a key, for AskedOnce and FrequencySketch: FNV-1a (hashA) and a second
 * multiplicative hash (hashB), left in these two variables (two numbers without an object per
 * call). One lookup asks both tables about one key several times (get, render, admits): the key
 * last hashed is not hashed again.
 */
let hashedKey: string | undefined;
let hashA = 0;
let hashB = 0;

function hashTwice(key: string): void {
  if (key === hashedKey) return;
  let a = FNV_OFFSET;
  let b = 0x9747b28c;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, FNV_PRIME);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  hashA = a;
  hashB = b;
  hashedKey = key;
}

/** How many tags an entry's tag string holds. */
function tagCount(tags: string): number {
  if (tags.length === 0) return 0;
  let count = 1;
  for (let i = tags.indexOf(TAG_SEPARATOR); i !== -1; i = tags.indexOf(TAG_SEPARATOR, i + 1)) count++;
  return count;
}

/** Roughly what a value holds in memory: a string's characters, a rendered body's bytes and room for its ETag, or its JSON's for anything else. */
function sizeOf(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (isRenderedBody(value)) return value.size + ETAG_SIZE;
  return JSON.stringify(value)?.length ?? 0;
}

/** A strong ETag as http/cache-headers.ts makes it: a quoted SHA-1 in base64url. */
const ETAG_SIZE = 29;

/** A body rendered once (http/cache-headers.ts, TaggedBody): its bytes, and its ETag once first sent. */
function isRenderedBody(value: unknown): value is { size: number } {
  return typeof value === 'object' && value !== null && typeof (value as { size?: unknown }).size === 'number';
}
