// Reading Chromium's screenshots in tests: a small PNG decoder (8-bit RGB or RGBA, not interlaced).
import { inflateSync } from 'node:zlib';

export interface Image {
  width: number;
  height: number;
  /** RGBA, 4 bytes per pixel. */
  pixels: Uint8Array;
}

/** Decodes an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes for screenshots). */
export function decodePng(data: Buffer): Image {
  if (data.subarray(0, 8).toString('hex') !== '89504e470d0a1a0a') throw new Error('not a PNG');
  let offset = 8;
  let width = 0;
  let height = 0;
  let colourType = 0;
  const idat: Buffer[] = [];
  while (offset < data.length) {
    const length = data.readUInt32BE(offset);
    const type = data.toString('ascii', offset + 4, offset + 8);
    const body = data.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const depth = body[8];
      colourType = body[9]!;
      if (depth !== 8 || (colourType !== 2 && colourType !== 6) || body[12] !== 0) throw new Error(`unsupported PNG: depth ${depth}, colour type ${colourType}, interlace ${body[12]}`);
    } else if (type === 'IDAT') {
      idat.push(body);
    } else if (type === 'IEND') {
      break;
    }
    offset += 12 + length;
  }
  const channels = colourType === 6 ? 4 : 3;
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const current = new Uint8Array(stride);
  let previous = new Uint8Array(stride);
  const pixels = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y += 1) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i += 1) {
      const a = i >= channels ? current[i - channels]! : 0;
      const b = previous[i]!;
      const c = i >= channels ? previous[i - channels]! : 0;
      let predictor = 0;
      if (filter === 1) predictor = a;
      else if (filter === 2) predictor = b;
      else if (filter === 3) predictor = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      current[i] = (line[i]! + predictor) & 0xff;
    }
    for (let x = 0; x < width; x += 1) {
      const to = (y * width + x) * 4;
      pixels[to] = current[x * channels]!;
      pixels[to + 1] = current[x * channels + 1]!;
      pixels[to + 2] = current[x * channels + 2]!;
      pixels[to + 3] = channels === 4 ? current[x * channels + 3]! : 255;
    }
    previous = Uint8Array.from(current);
  }
  return { width, height, pixels };
}
