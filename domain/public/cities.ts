/**
 * Where dn42 points of presence usually are: IATA-style city code → English
 * city name, ISO 3166-1 alpha-2 country, coordinates (city centre, 0.1°) and the
 * dn42 origin-region community (64511, 41..57):
 *
 * 41 Europe, 42 North America-E, 43 North America-C, 44 North America-W,
 * 45 Central America, 46 South America-E, 47 South America-W, 48 Africa-N,
 * 49 Africa-S, 50 Asia-S, 51 Asia-SE, 52 Asia-E, 53 Pacific & Oceania,
 * 54 Antarctica, 55 Asia-N, 56 Asia-W, 57 Central Asia.
 *
 * A node names its city through `site` (see `cityCodeOf`); its own region
 * (`labels.region`) wins over the table's. A city missing here is one line.
 */
export interface City {
  city: string;
  country: string;
  lat: number;
  lon: number;
  region: number;
}

const c = (city: string, country: string, lat: number, lon: number, region: number): City => ({ city, country, lat, lon, region });

export const CITIES: Readonly<Record<string, City>> = Object.freeze({
  // Europe
  AMS: c('Amsterdam', 'NL', 52.4, 4.9, 41),
  BER: c('Berlin', 'DE', 52.5, 13.4, 41),
  BRU: c('Brussels', 'BE', 50.8, 4.4, 41),
  BUD: c('Budapest', 'HU', 47.5, 19.0, 41),
  BUH: c('Bucharest', 'RO', 44.4, 26.1, 41),
  CPH: c('Copenhagen', 'DK', 55.7, 12.6, 41),
  DUB: c('Dublin', 'IE', 53.3, -6.3, 41),
  DUS: c('Düsseldorf', 'DE', 51.2, 6.8, 41),
  FRA: c('Frankfurt', 'DE', 50.1, 8.7, 41),
  HAM: c('Hamburg', 'DE', 53.6, 10.0, 41),
  HEL: c('Helsinki', 'FI', 60.2, 24.9, 41),
  IEV: c('Kyiv', 'UA', 50.5, 30.5, 41),
  LIS: c('Lisbon', 'PT', 38.7, -9.1, 41),
  LON: c('London', 'GB', 51.5, -0.1, 41),
  MAD: c('Madrid', 'ES', 40.4, -3.7, 41),
  MIL: c('Milan', 'IT', 45.5, 9.2, 41),
  MOW: c('Moscow', 'RU', 55.8, 37.6, 41),
  MUC: c('Munich', 'DE', 48.1, 11.6, 41),
  NUE: c('Nuremberg', 'DE', 49.5, 11.1, 41),
  OSL: c('Oslo', 'NO', 59.9, 10.8, 41),
  PAR: c('Paris', 'FR', 48.9, 2.4, 41),
  PRG: c('Prague', 'CZ', 50.1, 14.4, 41),
  SOF: c('Sofia', 'BG', 42.7, 23.3, 41),
  STO: c('Stockholm', 'SE', 59.3, 18.1, 41),
  VIE: c('Vienna', 'AT', 48.2, 16.4, 41),
  WAW: c('Warsaw', 'PL', 52.2, 21.0, 41),
  ZRH: c('Zurich', 'CH', 47.4, 8.5, 41),
  // North America
  ASH: c('Ashburn', 'US', 39.0, -77.5, 42),
  ATL: c('Atlanta', 'US', 33.7, -84.4, 42),
  MIA: c('Miami', 'US', 25.8, -80.2, 42),
  NYC: c('New York', 'US', 40.7, -74.0, 42),
  YUL: c('Montreal', 'CA', 45.5, -73.6, 42),
  YYZ: c('Toronto', 'CA', 43.7, -79.4, 42),
  CHI: c('Chicago', 'US', 41.9, -87.6, 43),
  DFW: c('Dallas', 'US', 32.8, -96.8, 43),
  LAX: c('Los Angeles', 'US', 34.1, -118.2, 44),
  SEA: c('Seattle', 'US', 47.6, -122.3, 44),
  SJC: c('San Jose', 'US', 37.3, -121.9, 44),
  YVR: c('Vancouver', 'CA', 49.3, -123.1, 44),
  MEX: c('Mexico City', 'MX', 19.4, -99.1, 45),
  // South America, Africa
  GRU: c('São Paulo', 'BR', -23.6, -46.6, 46),
  SCL: c('Santiago', 'CL', -33.4, -70.6, 47),
  CAI: c('Cairo', 'EG', 30.0, 31.2, 48),
  JNB: c('Johannesburg', 'ZA', -26.2, 28.0, 49),
  // Asia, Oceania
  BOM: c('Mumbai', 'IN', 19.1, 72.9, 50),
  BKK: c('Bangkok', 'TH', 13.8, 100.5, 51),
  SIN: c('Singapore', 'SG', 1.3, 103.8, 51),
  HKG: c('Hong Kong', 'HK', 22.3, 114.2, 52),
  OSA: c('Osaka', 'JP', 34.7, 135.5, 52),
  SEL: c('Seoul', 'KR', 37.6, 127.0, 52),
  SHA: c('Shanghai', 'CN', 31.2, 121.5, 52),
  TPE: c('Taipei', 'TW', 25.0, 121.6, 52),
  TYO: c('Tokyo', 'JP', 35.7, 139.7, 52),
  AKL: c('Auckland', 'NZ', -36.8, 174.8, 53),
  MEL: c('Melbourne', 'AU', -37.8, 145.0, 53),
  SYD: c('Sydney', 'AU', -33.9, 151.2, 53),
  OVB: c('Novosibirsk', 'RU', 55.0, 82.9, 55),
  DXB: c('Dubai', 'AE', 25.3, 55.3, 56),
  IST: c('Istanbul', 'TR', 41.0, 29.0, 56),
  ALA: c('Almaty', 'KZ', 43.2, 76.9, 57),
});

/**
 * The city code a site names: upper-cased, with one trailing instance number
 * (`fra1`, `fra-2`, `FRA_03`) dropped; a code the table does not know gives null
 * (the node has no place on the map).
 */
export function cityCodeOf(site: string | null | undefined): string | null {
  if (!site) return null;
  const code = site
    .trim()
    .toUpperCase()
    .replace(/[-_.]?\d+$/, '');
  return Object.hasOwn(CITIES, code) ? code : null;
}
