import { Log } from '../../backend';

/** A Log that keeps what it is told (and prints it when SYMPOSIUM_TEST_LOG is set). */
export class MemoryLog implements Log {
  readonly lines: string[] = [];
  trace(m: string) { this.add('trace', m); }
  debug(m: string) { this.add('debug', m); }
  info(m: string) { this.add('info', m); }
  warn(m: string) { this.add('warn', m); }
  error(m: string) { this.add('error', m); }
  private add(level: string, message: string) {
    this.lines.push(`${level}: ${message}`);
    if (process.env.SYMPOSIUM_TEST_LOG) {
      console.error(`${level}: ${message}`);
    }
  }
}
