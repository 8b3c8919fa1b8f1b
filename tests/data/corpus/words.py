from collections import Counter


def count_words(text):
    counts = Counter()
    for word in text.split():
        counts[word.lower()] += 1
    return counts


def top(text, n=3):
    return [word for word, _ in count_words(text).most_common(n)]


if __name__ == "__main__":
    print(top(input()))
