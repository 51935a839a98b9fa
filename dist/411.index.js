export const id = 411;
export const ids = [411];
export const modules = {

/***/ 411:
/***/ ((__unused_webpack_module, __webpack_exports__, __webpack_require__) => {

// ESM COMPAT FLAG
__webpack_require__.r(__webpack_exports__);

// EXPORTS
__webpack_require__.d(__webpack_exports__, {
  combineResults: () => (/* binding */ combineResults),
  getEventResults: () => (/* binding */ getEventResults),
  sendEvents: () => (/* binding */ sendEvents)
});

// EXTERNAL MODULE: external "node:path"
var external_node_path_ = __webpack_require__(6760);
// EXTERNAL MODULE: ./src/action/names.ts
var names = __webpack_require__(2814);
// EXTERNAL MODULE: ./src/service/client.ts
var service_client = __webpack_require__(9224);
// EXTERNAL MODULE: ./src/errors.ts
var errors = __webpack_require__(3916);
// EXTERNAL MODULE: external "node:buffer"
var external_node_buffer_ = __webpack_require__(4573);
// EXTERNAL MODULE: external "node:crypto"
var external_node_crypto_ = __webpack_require__(7598);
// EXTERNAL MODULE: ./src/json.ts
var json = __webpack_require__(8301);
;// CONCATENATED MODULE: ./src/events/events-error.ts
/**
 * What the event pipeline says about a bad input. The pipeline does not know which action input
 * the events came from: the command layer puts the input's name in front of `detail`.
 */
class EventsError extends Error {
    kind;
    /** The rest of the sentence after the input's name: ", line 3: …" or " has no events. …". */
    detail;
    /** The events named in `detail`, in input order (at most MAX_LISTED_PROBLEMS of them). */
    problems;
    constructor(kind, detail, problems = []) {
        super(`The events${detail}`);
        this.name = 'EventsError';
        this.kind = kind;
        this.detail = detail;
        this.problems = problems;
    }
}
/** "line 7" or "event 3". */
function describePosition(position) {
    return `${position.unit} ${position.at}`;
}
/** The file changed between the two passes. */
function changedError(what) {
    return new EventsError('changed', ` changed while its events were being sent: ${what}. Make sure nothing writes to it during this step.`);
}

;// CONCATENATED MODULE: ./src/events/event.ts
/**
 * One event: what the interface accepts (`id` optional, `name`, `data`), and its NDJSON line as
 * it will be sent, with a generated id first when it has none of its own.
 */


/** The fields of an event in the service's interface; the service refuses others. */
const EVENT_FIELDS = new Set(['id', 'name', 'data']);
/** Pass 1 sizes an event that has no id with this stand-in: randomUUID() has the same length. */
const UUID_PLACEHOLDER = '00000000-0000-0000-0000-000000000000';
/** `{"id":"<uuid>",` replaces an event's opening brace when its id is generated. */
const GENERATED_ID_PREFIX_BYTES = external_node_buffer_.Buffer.byteLength(`{"id":${JSON.stringify(UUID_PLACEHOLDER)},`);
// JSON.rawJSON and JSON.isRawJSON (Node 21+) are not in TypeScript's lib yet.
const rawJson = JSON;
/** What is wrong with one parsed event, or undefined when the interface accepts it. */
function eventProblem(value) {
    if (!(0,json/* isJsonObject */.OW)(value))
        return `it is ${describeJsonType(value)}, not an event object`;
    if (!Object.hasOwn(value, 'name'))
        return 'it has no "name" (a non-empty string is required)';
    if (typeof value.name !== 'string') {
        return `"name" is ${describeJsonType(value.name)}; it must be a non-empty string`;
    }
    if (value.name === '')
        return '"name" is empty; it must be a non-empty string';
    // Any JSON value, null included, as the interface says.
    if (!Object.hasOwn(value, 'data'))
        return 'it has no "data" (a JSON value is required)';
    const unknown = Object.keys(value).filter(field => !EVENT_FIELDS.has(field));
    if (unknown.length > 0) {
        return `it has ${unknown.map(field => JSON.stringify(field).slice(0, 40)).join(', ')}: an event has only "id", "name" and "data" (put anything else inside "data")`;
    }
    if (Object.hasOwn(value, 'id')) {
        if (typeof value.id !== 'string') {
            return `"id" is ${describeJsonType(value.id)}; give a non-empty string, or leave it out to get a generated id`;
        }
        if (value.id === '') {
            return '"id" is empty; give a non-empty string, or leave it out to get a generated id';
        }
    }
    return undefined;
}
/** What ndjsonLine(line, …).bytes will be, computed without building the line (pass 1 is hot). */
function ndjsonLineBytes(line, idIsGenerated) {
    return idIsGenerated ? GENERATED_ID_PREFIX_BYTES + line.length : line.length + 1;
}
/**
 * An NDJSON line as it will be sent: as written, so that every value reaches the service exactly
 * as the user wrote it, with the id first when it is a generated one.
 */
function ndjsonLine(line, id, idIsGenerated) {
    if (!idIsGenerated)
        return { id, parts: [line], bytes: line.length + 1 };
    // A valid event is an object with a name, so its text is "{" followed by at least one member.
    // A generated id is a UUID: plain ASCII, nothing to escape, GENERATED_ID_PREFIX_BYTES long.
    const rest = line.subarray(1);
    return {
        id,
        parts: ['{"id":"', id, '",', rest],
        bytes: GENERATED_ID_PREFIX_BYTES + rest.length + 1
    };
}
/** An event of a JSON document as a line, with `generatedId` first when given. */
function documentLine(event, generatedId) {
    const json = JSON.stringify(generatedId === undefined ? event : { id: generatedId, ...event });
    const id = generatedId ?? event.id;
    return { id, parts: [json], bytes: external_node_buffer_.Buffer.byteLength(json) + 1 };
}
/**
 * A JSON.parse reviver that keeps numbers JavaScript would change (large integers, 1.0, 1e400)
 * as their source text, so that re-serializing the event does not alter its data.
 */
function keepNumbersAsWritten(_key, value, context) {
    const source = context?.source;
    if (typeof value !== 'number' || source === undefined || rawJson.rawJSON === undefined) {
        return value;
    }
    return String(value) === source ? value : rawJson.rawJSON(source);
}
/**
 * The parser's message for one NDJSON line, without its "(line 1 column 13)": the line is named
 * by its number in the file already.
 */
function lineParseError(error) {
    const message = error instanceof Error ? error.message : String(error);
    return message.replace(/\s*\(line \d+ column \d+\)/, '');
}
function describeJsonType(value) {
    if (value === null)
        return 'null';
    if (value === undefined)
        return 'missing';
    if (Array.isArray(value))
        return 'an array';
    if (rawJson.isRawJSON?.(value) === true)
        return 'a number';
    switch (typeof value) {
        case 'string':
            return 'a string';
        case 'number':
            return 'a number';
        case 'boolean':
            return 'a boolean';
        default:
            return 'an object';
    }
}

;// CONCATENATED MODULE: ./src/events/document.ts
/**
 * Events given as one JSON document: an event object, or an array of them (pretty-printed or
 * not). Such a document is parsed whole, so it is read whole (at most MAX_DOCUMENT_BYTES).
 */



const ACCEPTED_FORMS = 'Give one JSON event object, a JSON array of events, or NDJSON (one event object per line).';
/** The events of one JSON document, each with its 1-based number. */
function documentEvents(text) {
    // Checked before parsing: the parser recurses, and a deep document overflows its stack.
    if ((0,json/* exceedsJsonDepth */.HV)(text)) {
        const line = deepLine(text);
        throw new EventsError('invalid', `, line ${line}: it nests JSON deeper than ${json/* MAX_JSON_DEPTH */.KX} levels, the most accepted. Nothing was sent.`, [{ position: { unit: 'line', at: line }, problem: `it nests deeper than ${json/* MAX_JSON_DEPTH */.KX}` }]);
    }
    let document;
    try {
        document = JSON.parse(text, keepNumbersAsWritten);
    }
    catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new EventsError('invalid', ` is not valid JSON: ${reason}. ${ACCEPTED_FORMS}`);
    }
    if (Array.isArray(document)) {
        return document.map((value, index) => ({ at: index + 1, value }));
    }
    if ((0,json/* isJsonObject */.OW)(document))
        return [{ at: 1, value: document }];
    throw new EventsError('invalid', ` is ${describeJsonType(document)}. ${ACCEPTED_FORMS}`);
}
/**
 * The 1-based line on which the document first nests too deep: the first line whose end, read
 * from the start, passes the bound (a binary search; only on this error path).
 */
function deepLine(text) {
    const lineEnds = [];
    for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) {
        lineEnds.push(index);
    }
    lineEnds.push(text.length);
    let low = 0;
    let high = lineEnds.length - 1;
    while (low < high) {
        const middle = (low + high) >> 1;
        if ((0,json/* exceedsJsonDepth */.HV)(text.slice(0, lineEnds[middle])))
            high = middle;
        else
            low = middle + 1;
    }
    return low + 1;
}

// EXTERNAL MODULE: external "node:fs/promises"
var promises_ = __webpack_require__(1455);
;// CONCATENATED MODULE: ./src/events/source.ts
/**
 * Reading events' text: inline text, or a file a chunk at a time, split into lines of bytes
 * with the byte order mark and surrounding JSON whitespace removed. Memory stays bounded by the
 * chunk size and the longest line allowed, whatever the file holds.
 */





/**
 * The longest line read, without its "\n": a line longer than a request can never be sent, so
 * reading stops there instead of holding the line (a 3 GB file without a newline is one line).
 */
const MAX_LINE_BYTES = service_client/* MAX_REQUEST_BYTES */.rO;
/**
 * The largest JSON document (a pretty-printed object or array) read: unlike NDJSON, a document
 * must be parsed whole, which takes several times its size in memory. Large inputs are NDJSON.
 */
const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;
/** How much of a file is read at a time: large, since each read is a trip to the thread pool. */
const READ_CHUNK_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;
/** JSON's whitespace other than "\n": space, tab, carriage return. */
const LINE_PADDING = new Set([0x20, 0x09, 0x0d]);
const UTF8_BOM = external_node_buffer_.Buffer.from([0xef, 0xbb, 0xbf]);
/** In a "u" pattern a valid surrogate pair is one code point, so only a lone half matches. */
const LONE_SURROGATE = /\p{Cs}/u;
/** Thrown by readLines at a line longer than MAX_LINE_BYTES, as soon as it passes the limit. */
class LineTooLong extends Error {
    /** 1-based. */
    lineNumber;
    /** The line's first byte that is not whitespace (-1 when there is none yet). */
    firstByte;
    constructor(lineNumber, firstByte, maxBytes) {
        super(`line ${lineNumber} is longer than ${maxBytes} bytes`);
        this.name = 'LineTooLong';
        this.lineNumber = lineNumber;
        this.firstByte = firstByte;
    }
}
/**
 * The source's lines as bytes, split on "\n" and stripped of surrounding JSON whitespace (so of
 * the "\r" of CRLF) and, on the first line, of a byte order mark. Blank lines are yielded (empty),
 * so that a reader can count lines. They come in groups, one per chunk of a file, each split
 * lazily: a group must be iterated to its end before the next is pulled.
 */
async function* readLines(source, maxLineBytes = MAX_LINE_BYTES) {
    const splitter = new LineSplitter(maxLineBytes);
    if (source.kind === 'inline') {
        checkWellFormed(source.text);
        yield splitter.linesOf(external_node_buffer_.Buffer.from(source.text, 'utf8'));
        yield splitter.rest();
        return;
    }
    const file = await openFile(source.path);
    // One buffer, reused for every chunk: its lines are used up before the next read.
    const chunk = external_node_buffer_.Buffer.allocUnsafe(READ_CHUNK_BYTES);
    try {
        for (;;) {
            const bytesRead = await readChunk(file, chunk);
            if (bytesRead === 0)
                break;
            yield splitter.linesOf(chunk.subarray(0, bytesRead));
        }
    }
    finally {
        await file.close();
    }
    yield splitter.rest();
}
/**
 * The whole source as text, for a JSON document: at most MAX_DOCUMENT_BYTES, valid UTF-8, without
 * its byte order mark.
 */
async function readDocument(source) {
    if (source.kind === 'inline') {
        checkWellFormed(source.text);
        if (external_node_buffer_.Buffer.byteLength(source.text) > MAX_DOCUMENT_BYTES)
            throw documentTooLarge();
        return stripBom(source.text);
    }
    const file = await openFile(source.path);
    try {
        const chunks = [];
        let length = 0;
        for (;;) {
            const chunk = external_node_buffer_.Buffer.allocUnsafe(READ_CHUNK_BYTES);
            const read = await readChunk(file, chunk);
            if (read === 0)
                break;
            chunks.push(chunk.subarray(0, read));
            length += read;
            if (length > MAX_DOCUMENT_BYTES)
                throw documentTooLarge();
        }
        const text = external_node_buffer_.Buffer.concat(chunks, length);
        if (!(0,external_node_buffer_.isUtf8)(text))
            throw notUtf8(firstInvalidUtf8Line(text));
        return stripBom(text.toString('utf8'));
    }
    finally {
        await file.close();
    }
}
/** Size and modification time: enough to notice that the file changed between the passes. */
async function fileVersionOf(path) {
    let stats;
    try {
        stats = await (0,promises_.stat)(path);
    }
    catch (error) {
        throw readError(error);
    }
    if (!stats.isFile())
        throw new EventsError('unreadable', ' is not a file.');
    return `${stats.size}:${stats.mtimeMs}`;
}
/** Invalid UTF-8 on a line. */
function notUtf8(lineNumber) {
    return new EventsError('invalid', `, line ${lineNumber}: it is not valid UTF-8. Save the file as UTF-8. Nothing was sent.`, [{ position: { unit: 'line', at: lineNumber }, problem: 'it is not valid UTF-8' }]);
}
class LineSplitter {
    maxLineBytes;
    /** The start of a line that continues in later chunks, in pieces: joined once, when it ends. */
    pending = [];
    pendingBytes = 0;
    linesYielded = 0;
    constructor(maxLineBytes) {
        this.maxLineBytes = maxLineBytes;
    }
    *linesOf(chunk) {
        let start = 0;
        for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
            const piece = chunk.subarray(start, end);
            this.checkLength(piece);
            if (this.pending.length === 0) {
                yield this.trim(piece);
            }
            else {
                this.pending.push(piece);
                const line = external_node_buffer_.Buffer.concat(this.pending);
                this.pending = [];
                this.pendingBytes = 0;
                yield this.trim(line);
            }
            start = end + 1;
        }
        if (start < chunk.length) {
            const piece = chunk.subarray(start);
            // Checked before it is kept: a line past the limit is refused, never held.
            this.checkLength(piece);
            // Copied: the chunk's buffer is reused for the next read.
            this.pending.push(external_node_buffer_.Buffer.from(piece));
            this.pendingBytes += piece.length;
        }
    }
    /** The last line, when the source does not end with a newline. */
    *rest() {
        if (this.pending.length > 0)
            yield this.trim(external_node_buffer_.Buffer.concat(this.pending));
        this.pending = [];
        this.pendingBytes = 0;
    }
    checkLength(piece) {
        if (this.pendingBytes + piece.length <= this.maxLineBytes)
            return;
        const head = [...this.pending, piece].map(part => firstNonPadding(part)).find(b => b !== -1);
        throw new LineTooLong(this.linesYielded + 1, head ?? -1, this.maxLineBytes);
    }
    trim(line) {
        let start = 0;
        if (this.linesYielded++ === 0 && line.subarray(0, UTF8_BOM.length).equals(UTF8_BOM)) {
            start = UTF8_BOM.length;
        }
        let end = line.length;
        while (start < end && LINE_PADDING.has(line[start]))
            start++;
        while (end > start && LINE_PADDING.has(line[end - 1]))
            end--;
        return start === 0 && end === line.length ? line : line.subarray(start, end);
    }
}
function firstNonPadding(bytes) {
    for (const byte of bytes)
        if (!LINE_PADDING.has(byte) && byte !== NEWLINE)
            return byte;
    return -1;
}
/** Inline text comes as a string: a lone surrogate is its form of invalid UTF-8. */
function checkWellFormed(text) {
    if (!LONE_SURROGATE.test(text))
        return;
    const lines = text.split('\n');
    throw notUtf8(lines.findIndex(line => LONE_SURROGATE.test(line)) + 1);
}
function firstInvalidUtf8Line(bytes) {
    let lineNumber = 1;
    let start = 0;
    for (;;) {
        const end = bytes.indexOf(NEWLINE, start);
        if (!(0,external_node_buffer_.isUtf8)(bytes.subarray(start, end === -1 ? bytes.length : end)))
            return lineNumber;
        if (end === -1)
            return lineNumber;
        lineNumber++;
        start = end + 1;
    }
}
async function openFile(path) {
    try {
        return await (0,promises_.open)(path, 'r');
    }
    catch (error) {
        throw readError(error);
    }
}
async function readChunk(file, into) {
    try {
        return (await file.read(into, 0, into.length, null)).bytesRead;
    }
    catch (error) {
        throw readError(error);
    }
}
function readError(error) {
    const code = error?.code;
    const reason = code === 'ENOENT'
        ? 'there is no such file'
        : code === 'EACCES'
            ? 'permission denied'
            : code === 'EISDIR'
                ? 'it is a directory'
                : (0,errors/* errorMessage */.gJ)(error);
    return new EventsError('unreadable', ` cannot be read: ${reason}.`);
}
function documentTooLarge() {
    return new EventsError('invalid', ` is a JSON document of more than ${MAX_DOCUMENT_BYTES} bytes, which is read whole. Write large inputs as NDJSON (one event object per line), which is read a line at a time. Nothing was sent.`);
}
function stripBom(text) {
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

// EXTERNAL MODULE: ./src/text.ts
var src_text = __webpack_require__(8992);
;// CONCATENATED MODULE: ./src/events/validate.ts
/**
 * Pass 1: every event is read and checked before anything is sent. What pass 2 needs is kept in
 * little memory: one bit per event (whether it needs a generated id) and the ids seen, to refuse
 * duplicates.
 *
 * The format is told by content: when the first non-blank line is a complete JSON value other
 * than an array, the source is NDJSON (one event per line; blank lines skipped but counted);
 * otherwise it is one JSON document, an event object or an array of them.
 */








/** Invalid events listed in one error message; the rest are only counted. */
const MAX_LISTED_PROBLEMS = 5;
const OPENING_BRACKET = 0x5b;
/**
 * Checks every event. Returns what pass 2 needs, or throws an EventsError that names the invalid
 * events' positions; then nothing may be sent.
 */
async function validateEvents(source) {
    const fileVersion = source.kind === 'file' ? await fileVersionOf(source.path) : undefined;
    const needsId = new BitList();
    const idPositions = new Map();
    let total = 0;
    let invalid = 0;
    const listed = [];
    const reader = new EventReader(source);
    for await (const group of reader.events()) {
        for (const item of group) {
            const problem = 'problem' in item ? item.problem : checkEvent(item, idPositions);
            if (problem === undefined) {
                const id = item.value.id;
                needsId.set(total, typeof id !== 'string');
                total++;
                continue;
            }
            invalid++;
            if (listed.length < MAX_LISTED_PROBLEMS)
                listed.push({ position: item.position, problem });
        }
    }
    if (invalid > 0)
        throw invalidEvents(invalid, listed);
    if (total === 0)
        throw new EventsError('invalid', ` has no events. ${ACCEPTED_FORMS}`);
    const format = reader.isNdjson ? 'ndjson' : 'document';
    return { source, total, format, needsId: needsId.bytes(), fileVersion };
}
/** Whether event `position` (0-based) gets a generated id. */
function needsGeneratedId(validated, position) {
    return ((validated.needsId[position >> 3] ?? 0) & (1 << (position & 7))) !== 0;
}
function invalidEvents(invalid, listed) {
    const items = listed.map(item => `${describePosition(item.position)}: ${item.problem}`);
    if (invalid === 1) {
        return new EventsError('invalid', `, ${items[0]}. Nothing was sent.`, listed);
    }
    const more = invalid > listed.length ? `; and ${invalid - listed.length} more` : '';
    return new EventsError('invalid', ` has ${(0,src_text/* plural */.LS)(invalid, 'invalid event')}; nothing was sent. ${items.join('; ')}${more}.`, listed);
}
/** What is wrong with a parsed event, counting its size and whether its id was already used. */
function checkEvent(item, idPositions) {
    const problem = eventProblem(item.value);
    if (problem !== undefined)
        return problem;
    const event = item.value;
    const needsId = typeof event.id !== 'string';
    const bytes = item.line === undefined
        ? documentLine(event, needsId ? UUID_PLACEHOLDER : undefined).bytes
        : ndjsonLineBytes(item.line, needsId);
    if (bytes > service_client/* MAX_REQUEST_BYTES */.rO) {
        const withId = needsId ? ' with its generated id' : '';
        return `it is ${bytes} bytes as an NDJSON line${withId}, over the service's limit of ${service_client/* MAX_REQUEST_BYTES */.rO} bytes per request`;
    }
    if (needsId)
        return undefined;
    const id = event.id;
    const first = idPositions.get(id);
    if (first !== undefined) {
        return `its "id" ${JSON.stringify(id).slice(0, 60)} is also the id of ${describePosition(first)}; ids must be unique`;
    }
    idPositions.set(id, item.position);
    return undefined;
}
/**
 * Reads a source's events, in groups (one per chunk of the file), each read lazily: a group must
 * be iterated to its end before the next is pulled.
 */
class EventReader {
    /** Undefined until the first non-blank line has told the format. */
    isNdjson;
    source;
    lineNumber = 0;
    /** Set at a line too long to read: reading ends there. */
    stopped = false;
    constructor(source) {
        this.source = source;
    }
    async *events() {
        for await (const lines of readLines(this.source)) {
            yield this.ndjsonEvents(lines);
            if (this.isNdjson === false || this.stopped)
                break;
        }
        if (this.isNdjson === false) {
            yield documentEvents(await readDocument(this.source)).map(({ at, value }) => ({
                position: { unit: 'event', at },
                value
            }));
        }
    }
    *ndjsonEvents(lines) {
        try {
            for (const line of lines) {
                this.lineNumber++;
                if (line.length === 0)
                    continue;
                const position = { unit: 'line', at: this.lineNumber };
                if (!(0,external_node_buffer_.isUtf8)(line)) {
                    // No format yet: this may be the start of a document, which reports it the same way.
                    if (this.isNdjson === undefined) {
                        this.isNdjson = false;
                        return;
                    }
                    yield { position, problem: 'it is not valid UTF-8' };
                    continue;
                }
                if ((0,json/* exceedsJsonDepth */.HV)(line)) {
                    yield { position, problem: `it nests JSON deeper than ${json/* MAX_JSON_DEPTH */.KX} levels` };
                    continue;
                }
                let value;
                try {
                    value = JSON.parse(line.toString('utf8'));
                }
                catch (error) {
                    if (this.isNdjson === undefined) {
                        this.isNdjson = false;
                        return;
                    }
                    yield { position, problem: `it is not valid JSON (${lineParseError(error)})` };
                    continue;
                }
                if (this.isNdjson === undefined) {
                    this.isNdjson = !Array.isArray(value);
                    if (!this.isNdjson)
                        return;
                }
                yield { position, value, line };
            }
        }
        catch (error) {
            if (!(error instanceof LineTooLong))
                throw error;
            // A long first line that opens an array is a one-line JSON document, read whole.
            if (this.isNdjson === undefined && error.firstByte === OPENING_BRACKET) {
                this.isNdjson = false;
                return;
            }
            this.stopped = true;
            yield {
                position: { unit: 'line', at: error.lineNumber },
                problem: `it is longer than ${MAX_LINE_BYTES} bytes, more than one request may hold (reading stopped there)`
            };
        }
    }
}
/** A growable list of bits, one per event. */
class BitList {
    data = new Uint8Array(64);
    set(index, value) {
        const byte = index >> 3;
        if (byte >= this.data.length) {
            const grown = new Uint8Array(Math.max(this.data.length * 2, byte + 1));
            grown.set(this.data);
            this.data = grown;
        }
        if (value)
            this.data[byte] |= 1 << (index & 7);
    }
    bytes() {
        return this.data;
    }
}

;// CONCATENATED MODULE: ./src/events/batches.ts
/**
 * Pass 2: reads the validated source again and cuts its events into NDJSON request bodies, each
 * as full as the service's limits allow. NDJSON lines are copied as bytes, not parsed again,
 * unless the event has an id of its own to read.
 */









const SERVICE_LIMITS = {
    maxEvents: service_client/* MAX_EVENTS_PER_REQUEST */.NQ,
    maxBytes: service_client/* MAX_REQUEST_BYTES */.rO
};
const batches_NEWLINE = 0x0a;
const OPENING_BRACE = 0x7b;
/** A new random UUID for an event that has no id of its own. */
function newEventId() {
    return (0,external_node_crypto_.randomUUID)();
}
/**
 * The batches of a validated source, made lazily, one at a time. Each event without an id gets
 * a random UUID here, before any attempt, so a retried batch carries the same ids. Throws an
 * EventsError ("changed") if the file changed since it was validated.
 */
async function* eventBatches(validated, limits = SERVICE_LIMITS) {
    const { source } = validated;
    if (source.kind === 'file' && (await fileVersionOf(source.path)) !== validated.fileVersion) {
        throw changedError('it was modified after its events were validated');
    }
    const builder = new BatchBuilder(limits);
    let position = 0;
    const lines = validated.format === 'ndjson' ? ndjsonLines(validated) : documentLines(validated);
    for await (const group of lines) {
        for (const line of group) {
            position++;
            const full = builder.add(line);
            if (full !== undefined)
                yield full;
        }
    }
    if (position !== validated.total) {
        throw changedError(`it now holds ${position} events instead of ${validated.total}`);
    }
    const last = builder.finish();
    if (last !== undefined)
        yield last;
}
/**
 * Builds batches line by line, in order: at most `limits.maxEvents` events and `limits.maxBytes`
 * bytes each. Lines are written into one scratch buffer, and each body is a copy of its used part.
 */
class BatchBuilder {
    limits;
    buffer;
    ids = [];
    bytes = 0;
    firstPosition = 0;
    constructor(limits = SERVICE_LIMITS) {
        this.limits = limits;
        this.buffer = external_node_buffer_.Buffer.allocUnsafe(limits.maxBytes);
    }
    /** Adds a line; returns the batch it completed when the line did not fit in that one. */
    add(line) {
        // Pass 1 refused every event larger than a request; this guards against a changed file.
        if (line.bytes > this.limits.maxBytes) {
            throw changedError(`an event is now ${line.bytes} bytes, more than a request may hold`);
        }
        const full = this.ids.length === this.limits.maxEvents || this.bytes + line.bytes > this.limits.maxBytes
            ? this.finish()
            : undefined;
        let end = this.bytes;
        for (const part of line.parts) {
            if (typeof part === 'string') {
                end += this.buffer.write(part, end);
            }
            else {
                this.buffer.set(part, end);
                end += part.length;
            }
        }
        this.buffer[end] = batches_NEWLINE;
        this.bytes = end + 1;
        this.ids.push(line.id);
        return full;
    }
    /** The batch being filled, if it holds any event; the next one starts after it. */
    finish() {
        if (this.ids.length === 0)
            return undefined;
        const batch = {
            firstPosition: this.firstPosition,
            ids: this.ids,
            body: external_node_buffer_.Buffer.from(this.buffer.subarray(0, this.bytes))
        };
        this.firstPosition += this.ids.length;
        this.ids = [];
        this.bytes = 0;
        return batch;
    }
}
/**
 * NDJSON lines from bytes: an event with its own id is parsed for that id, and any other is not
 * parsed at all, only given a generated id.
 */
async function* ndjsonLines(validated) {
    const { total } = validated;
    let lineNumber = 0;
    let position = 0;
    function* linesOf(group) {
        for (const line of group) {
            lineNumber++;
            if (line.length === 0)
                continue;
            if (position >= total) {
                throw changedError(`it now holds more than the ${total} events validated`);
            }
            if (!needsGeneratedId(validated, position++)) {
                const event = parseOrUndefined(line.toString('utf8'));
                if (!(0,json/* isJsonObject */.OW)(event) || typeof event.id !== 'string')
                    throw lineChanged(lineNumber);
                yield ndjsonLine(line, event.id, false);
            }
            else if (line[0] === OPENING_BRACE) {
                yield ndjsonLine(line, newEventId(), true);
            }
            else {
                throw lineChanged(lineNumber);
            }
        }
    }
    try {
        for await (const group of readLines(validated.source))
            yield linesOf(group);
    }
    catch (error) {
        if (error instanceof LineTooLong)
            throw lineChanged(error.lineNumber);
        throw error;
    }
}
/** The events of a JSON document: parsed again and serialized. */
async function* documentLines(validated) {
    const lines = [];
    let events;
    try {
        events = documentEvents(await readDocument(validated.source));
    }
    catch (error) {
        if (error instanceof EventsError && error.kind === 'invalid') {
            throw changedError('it is no longer what was validated');
        }
        throw error;
    }
    for (const [index, item] of events.entries()) {
        if (eventProblem(item.value) !== undefined) {
            throw changedError(`event ${item.at} is no longer what was validated`);
        }
        const event = item.value;
        const id = needsGeneratedId(validated, index) ? newEventId() : undefined;
        if (id === undefined && typeof event.id !== 'string') {
            throw changedError(`event ${item.at} is no longer what was validated`);
        }
        lines.push(documentLine(event, id));
    }
    yield lines;
}
function lineChanged(lineNumber) {
    return changedError(`line ${lineNumber} is no longer what was validated`);
}
function parseOrUndefined(text) {
    try {
        return JSON.parse(text);
    }
    catch {
        return undefined;
    }
}

;// CONCATENATED MODULE: ./src/events/accepted-ids.ts

/**
 * The ids the service accepted, batch by batch: batches may be accepted out of order, and the
 * ids are written in input order. Each batch's ids are kept as JSON array elements in one buffer,
 * outside the JavaScript heap.
 */
class AcceptedIds {
    // Kept as buffers: peak RSS for 100,000 events of 300 B went from 1.60x to 1.47x that of 10,000 (96 → 88 MiB; target ≤ 1.5).
    parts = [];
    sorted = true;
    count = 0;
    add(firstPosition, ids) {
        const last = this.parts[this.parts.length - 1];
        if (last !== undefined && last.firstPosition > firstPosition)
            this.sorted = false;
        const json = external_node_buffer_.Buffer.from(ids.map(id => JSON.stringify(id)).join(','), 'utf8');
        this.parts.push({ firstPosition, count: ids.length, json });
        this.count += ids.length;
    }
    /** The accepted batches' positions, in input order. */
    batches() {
        if (!this.sorted) {
            this.parts.sort((a, b) => a.firstPosition - b.firstPosition);
            this.sorted = true;
        }
        return this.parts;
    }
    /**
     * The ids as one JSON array, a line per batch (JSON allows a newline between elements), so
     * that 100,000 ids are never one string.
     */
    *jsonLines() {
        const parts = this.batches();
        if (parts.length === 0)
            yield '[]';
        for (let i = 0; i < parts.length; i++) {
            const open = i === 0 ? '[' : '';
            const close = i === parts.length - 1 ? ']' : ',';
            yield `${open}${parts[i].json.toString('utf8')}${close}`;
        }
    }
}

;// CONCATENATED MODULE: ./src/events/stream.ts
/**
 * Sending a validated source's batches, a few at a time, and saying which events were accepted
 * when one fails.
 */




/**
 * Batches in flight at once: enough to overlap reading the file with the service's answers,
 * few enough that memory holds only a few 1 MB bodies.
 */
const CONCURRENT_BATCHES = 4;
/**
 * Sends the batches of what validateEvents returned, at most CONCURRENT_BATCHES in flight, pulling
 * each from the source only when a slot is free. `sendBatch` resolves to the ids the service
 * accepted (the client checks that there is one per event). A batch that fails ends the stream:
 * no batch is started after it, the ones in flight finish, and the result says which events
 * were accepted and which were not.
 */
async function streamEvents(validated, sendBatch, limits) {
    const { total } = validated;
    const batches = eventBatches(validated, limits);
    const accepted = new AcceptedIds();
    let failure;
    const sendUntilDoneOrFailed = async () => {
        while (failure === undefined) {
            let next;
            try {
                next = await batches.next();
            }
            catch (error) {
                failure ??= { error };
                return;
            }
            // Another batch may have failed while this one was being read: then it is not started.
            if (next.done || failure !== undefined)
                return;
            const batch = next.value;
            try {
                accepted.add(batch.firstPosition, await sendBatch(batch));
            }
            catch (error) {
                failure ??= { error };
            }
        }
    };
    try {
        await Promise.all(Array.from({ length: CONCURRENT_BATCHES }, sendUntilDoneOrFailed));
    }
    finally {
        await batches.return(undefined);
    }
    if (failure === undefined)
        return { total, accepted };
    return {
        total,
        accepted,
        failure: {
            error: failure.error,
            notSent: describePositions(missingRanges(accepted.batches(), total)),
            acceptedCount: accepted.count
        }
    };
}
/**
 * One line for humans, e.g. "Sent 2000 of 2100 events; events 2001–2100 were not accepted: …".
 * `reason` is the failure's message, as the caller words it (errorMessage of the error unless
 * given).
 */
function describePartialFailure(result, reason) {
    const { total, failure } = result;
    if (failure === undefined)
        return `Sent all ${(0,src_text/* plural */.LS)(total, 'event')}.`;
    const why = reason ?? (0,errors/* errorMessage */.gJ)(failure.error);
    const notAccepted = total - failure.acceptedCount;
    if (notAccepted === 0)
        return `Sent all ${(0,src_text/* plural */.LS)(total, 'event')}, then: ${why}`;
    const verb = notAccepted === 1 ? 'was' : 'were';
    return `Sent ${failure.acceptedCount} of ${(0,src_text/* plural */.LS)(total, 'event')}; ${failure.notSent} ${verb} not accepted: ${why}`;
}
/**
 * 0-based, end-exclusive ranges as 1-based positions: [[1000, 2000], [4, 5]] →
 * "events 1001–2000, 5". A single position reads "event 5"; no positions read "no events".
 */
function describePositions(ranges) {
    const nonEmpty = ranges.filter(([start, end]) => end > start);
    const count = nonEmpty.reduce((sum, [start, end]) => sum + end - start, 0);
    if (count === 0)
        return 'no events';
    const parts = nonEmpty.map(([start, end]) => end - start === 1 ? `${start + 1}` : `${start + 1}–${end}`);
    return `${count === 1 ? 'event' : 'events'} ${parts.join(', ')}`;
}
/** The gaps between accepted batches (sorted by position) in [0, total), end-exclusive. */
function missingRanges(accepted, total) {
    const ranges = [];
    let next = 0;
    for (const batch of accepted) {
        if (batch.firstPosition > next)
            ranges.push([next, batch.firstPosition]);
        next = batch.firstPosition + batch.count;
    }
    if (next < total)
        ranges.push([next, total]);
    return ranges;
}

;// CONCATENATED MODULE: ./src/commands/events.ts









/** `events`: validate every event, then stream them to POST /v2/stream in batches. */
async function sendEvents({ settings, client, report, env, printRequest }) {
    const source = eventSource(settings.events, settings.eventsFile, env['GITHUB_WORKSPACE']);
    const validated = await namingTheInput(source, () => validateEvents(source));
    const total = validated.total;
    if (settings.dryRun) {
        let requests = 0;
        await namingTheInput(source, async () => {
            for await (const batch of eventBatches(validated)) {
                printRequest(service_client/* serviceRequests */.mJ.sendEvents(batch.body));
                requests++;
            }
        });
        report.table('Events (dry run, not sent)', [
            ['Events', total],
            ['Requests', requests]
        ]);
        return;
    }
    let requests = 0;
    const result = await streamEvents(validated, async (batch) => {
        const ids = await client.sendEvents(batch.body, batch.ids.length);
        requests++;
        return ids;
    });
    // Accepted ids are reported even when a later batch failed: nothing accepted is lost.
    report.outputLines(names/* Outputs */.tY.EventIds, result.accepted.jsonLines());
    report.table('Events sent', [
        ['Events', total],
        ['Accepted', result.accepted.count],
        ['Requests', requests]
    ]);
    if (result.failure) {
        // The partial failure keeps its cause's kind, so an outage stays an outage for the policy.
        const cause = inputErrorOf(source, result.failure.error);
        const message = describePartialFailure(result, (0,errors/* errorMessage */.gJ)(cause));
        if (cause instanceof errors/* InputError */.dz)
            throw new errors/* InputError */.dz(cause.input, message);
        throw new errors/* ServiceError */._7(message, {
            kind: cause instanceof errors/* ServiceError */._7 ? cause.kind : 'protocol',
            call: cause instanceof errors/* ServiceError */._7 ? cause.call : 'POST /v2/stream',
            status: cause instanceof errors/* ServiceError */._7 ? cause.status : undefined
        });
    }
    report.info(`Sent ${(0,src_text/* plural */.LS)(result.accepted.count, 'event')} in ${(0,src_text/* plural */.LS)(requests, 'request')}.`);
}
/** `event-results`: read results for the ids, at most MAX_EVENT_IDS_PER_REQUEST per request. */
async function getEventResults({ settings, client, report, printRequest }) {
    const ids = settings.eventIds ?? [];
    const responses = [];
    let requests = 0;
    for (let start = 0; start < ids.length; start += service_client/* MAX_EVENT_IDS_PER_REQUEST */.LD) {
        const slice = ids.slice(start, start + service_client/* MAX_EVENT_IDS_PER_REQUEST */.LD);
        if (settings.dryRun)
            printRequest(service_client/* serviceRequests */.mJ.getEventResults(slice));
        else
            responses.push(await client.getEventResults(slice));
        requests++;
    }
    if (settings.dryRun) {
        report.table('Event results (dry run, not read)', [
            ['Event ids', ids.length],
            ['Requests', requests]
        ]);
        return;
    }
    const results = combineResults(responses);
    report.output(names/* Outputs */.tY.EventResults, JSON.stringify(results));
    report.info(`Read ${(0,src_text/* plural */.LS)(results.length, 'result')} for ${(0,src_text/* plural */.LS)(ids.length, 'event id')}.`);
    report.table('Event results', [
        ['Event ids', ids.length],
        ['Requests', requests],
        ['Results', results.length]
    ]);
}
/**
 * The results' shape is not documented. Arrays are concatenated; anything else is kept whole, as
 * one element per response, so nothing the service said is dropped.
 */
function combineResults(responses) {
    if (responses.every(Array.isArray))
        return responses.flat();
    return [...responses];
}
function eventSource(inline, file, workspace) {
    if (inline !== undefined)
        return { kind: 'inline', text: inline };
    const path = file ?? '';
    return { kind: 'file', path: (0,external_node_path_.isAbsolute)(path) ? path : (0,external_node_path_.resolve)(workspace ?? process.cwd(), path) };
}
/** Runs a step of the pipeline, turning what it says about the events into an InputError. */
async function namingTheInput(source, step) {
    try {
        return await step();
    }
    catch (error) {
        throw inputErrorOf(source, error);
    }
}
/** An EventsError as an InputError naming events or events-file; anything else as it is. */
function inputErrorOf(source, error) {
    if (!(error instanceof EventsError))
        return error;
    const input = source.kind === 'file' ? names/* Inputs */.G0.EventsFile : names/* Inputs */.G0.Events;
    const subject = source.kind === 'file' ? `Input ${input} ("${source.path}")` : `Input ${input}`;
    return new errors/* InputError */.dz(input, `${subject}${error.detail}`);
}


/***/ })

};
