/** Small, real WAV files for demo recordings: 16-bit PCM mono, a soft two-tone chime. */

export interface ToneOptions {
  readonly seconds: number;
  readonly frequency: number;
  readonly sampleRate?: number;
}

export function toneWav({ seconds, frequency, sampleRate = 8000 }: ToneOptions): Buffer {
  const samples = Math.round(seconds * sampleRate);
  const dataBytes = samples * 2;
  const wav = Buffer.alloc(44 + dataBytes);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + dataBytes, 4);
  wav.write('WAVE', 8, 'ascii');
  wav.write('fmt ', 12, 'ascii');
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate * 2, 28); // byte rate
  wav.writeUInt16LE(2, 32); // block align
  wav.writeUInt16LE(16, 34); // bits per sample
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(dataBytes, 40);
  const fade = Math.min(samples / 2, sampleRate * 0.05);
  for (let i = 0; i < samples; i++) {
    const t = i / sampleRate;
    // The second half a fifth higher, so it is audibly a recording and not a dial tone.
    const f = i < samples / 2 ? frequency : frequency * 1.5;
    const envelope = Math.min(1, i / fade, (samples - 1 - i) / fade);
    const value = Math.sin(2 * Math.PI * f * t) * envelope * 0.3;
    wav.writeInt16LE(Math.round(value * 32_767), 44 + i * 2);
  }
  return wav;
}
