package io.countergateway.internal.model;

import io.countergateway.config.LimitsOptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Random;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

class IdCharactersTest {
  private static final String ALPHABET = "aZ09._~:/@+=!,-[]\\^ %\"'<>é€\u0000\t\n😀";

  @ParameterizedTest
  @ValueSource(strings = {LimitsOptions.DEFAULT_ID_PATTERN, "[a-z]+", "[^/]+", "[\\w\\]-]+", "[a-z]+[0-9]+",
    "[a-z&&[^x]]+", "(?i)[a-z]+", "[\\p{L}0-9]+", "[a-z]*"})
  @DisplayName("an id is taken exactly when limits.idPattern matches it, whatever the pattern and the characters")
  void answersAsTheRegex(String regex) {
    Pattern pattern = Pattern.compile(regex);
    IdCharacters ids = IdCharacters.of(pattern);
    Random random = new Random(regex.hashCode());
    for (int i = 0; i < 20_000; i++) {
      StringBuilder id = new StringBuilder();
      int length = random.nextInt(6);
      for (int j = 0; j < length; j++) {
        id.appendCodePoint(ALPHABET.codePointAt(ALPHABET.offsetByCodePoints(0, random.nextInt(ALPHABET.codePointCount(0, ALPHABET.length())))));
      }
      assertThat(ids.matches(id.toString())).as("%s on '%s'", regex, id).isEqualTo(pattern.matcher(id).matches());
    }
  }
}
